import { z } from 'zod';

/** A safe agent name: a letter, then letters, digits, "_" or "-" (at most 64 characters). */
export const AGENT_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

const rule = z.string().min(1).max(1000);

/** The seed's worker kinds (WorkerAgentKind): each a preset of permissions, prompt and step budget. */
export const WORKER_AGENT_KINDS = ['read_only', 'planner', 'implementer', 'verifier', 'reviewer', 'custom'] as const;

/** A worker kind. */
export type WorkerAgentKind = (typeof WORKER_AGENT_KINDS)[number];

/** The fields of an agent definition file (YAML, or the front matter of a Markdown file whose body is the prompt). */
export const AgentDefinitionFileSchema = z
  .object({
    name: z.string().regex(AGENT_NAME_PATTERN, 'must be a letter followed by up to 63 letters, digits, "_" or "-"'),
    description: z.string().min(1).max(2000),
    max_steps: z.number().int().positive().max(1000).optional(),
    permissions: z
      .object({ allow: z.array(rule).max(256).optional(), deny: z.array(rule).max(256).optional() })
      .strict()
      .optional(),
    model: z
      .string()
      .regex(/^[^/\s]+\/\S+$/, 'must be "provider/model"')
      .max(200)
      .optional(),
    prompt: z.string().max(100_000).optional(),
    /** The seed's worker form: a file with `kind` is a WorkerAgentSpec (its permissions narrow the kind's bound). */
    kind: z.enum(WORKER_AGENT_KINDS).optional(),
    /** With `kind`: left out of the agents offered to editors. */
    hidden: z.boolean().optional(),
  })
  .strict()
  .meta({ id: 'AgentDefinitionFile' });

/** A parsed agent definition file. */
export type AgentDefinitionFile = z.infer<typeof AgentDefinitionFileSchema>;

/** One agent as GET /v1/sessions/:id/agents lists it. */
export const AgentInfoSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    /** `builtin`, `config` (the operator's agent_dirs) or `session` (the session's agentDirs and POST .../agents/dirs). */
    source: z.enum(['builtin', 'config', 'session']),
    /** The prompt style the agent runs in (agent_mode_changed.mode). */
    mode: z.string(),
    /** True when the agent's permissions deny every tool that writes, runs commands or reaches the network. */
    readOnly: z.boolean(),
    model: z.string().nullable(),
    maxSteps: z.number().int().nullable(),
    /** The worker kind of an agent registered as a worker (workerAgents, registerWorkerAgent), else null. */
    kind: z.enum(WORKER_AGENT_KINDS).nullable(),
    /** True for a worker registered with `hidden: true`: listed here, kept out of the agents offered to editors. */
    hidden: z.boolean(),
  })
  .meta({ id: 'AgentInfo' });

/** An agent in wire form. */
export type AgentInfo = z.infer<typeof AgentInfoSchema>;

/** Answer of GET /v1/sessions/:id/agents. */
export const AgentListResponseSchema = z.object({ agents: z.array(AgentInfoSchema) }).meta({ id: 'AgentListResponse' });

/** Body of POST /v1/sessions/:id/agents/dirs: a directory inside the session's workspace. */
export const AgentDirRequestSchema = z
  .object({ path: z.string().min(1).max(4096) })
  .strict()
  .meta({ id: 'AgentDirRequest' });

/** Answer of POST /v1/sessions/:id/agents/dirs: how many definitions the directory held, and every agent of the session. */
export const AgentDirRegisteredResponseSchema = z
  .object({ registered: z.number().int().nonnegative(), agents: z.array(AgentInfoSchema) })
  .meta({ id: 'AgentDirRegisteredResponse' });

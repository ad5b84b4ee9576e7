import { z } from 'zod';
import { AGENT_NAME_PATTERN, AgentInfoSchema, WORKER_AGENT_KINDS } from './agents.js';
import { PermissionPolicySchema } from './governance.js';
import { ConfirmationInheritanceSchema } from './subagent-task.js';

/**
 * The seed's WorkerAgentSpec (SessionOptions.workerAgents, registerWorkerAgent(s), sessionForWorker): a
 * reproducible recipe compiled into an agent the `task` tool (or a session) runs as. `permissions` narrow the
 * kind's bound (a `custom` worker's replace its ask-everything default); nothing widens the session's policy.
 */
export const WorkerAgentSpecSchema = z
  .object({
    name: z.string().regex(AGENT_NAME_PATTERN, 'must be a letter followed by up to 63 letters, digits, "_" or "-"'),
    description: z.string().min(1).max(2000),
    kind: z.enum(WORKER_AGENT_KINDS),
    /** Left out of agent lists (GET .../agents shows it with `hidden: true`); still delegated to by name. */
    hidden: z.boolean().optional(),
    permissions: PermissionPolicySchema.optional(),
    model: z
      .string()
      .regex(/^[^/\s]+\/\S+$/, 'must be "provider/model"')
      .max(200)
      .optional(),
    prompt: z.string().max(100_000).optional(),
    maxSteps: z.number().int().positive().max(1000).optional(),
    /** How the worker's child runs answer an ask; `auto_approve` needs the host_direct scope. */
    confirmationInheritance: ConfirmationInheritanceSchema.optional(),
  })
  .strict()
  .meta({ id: 'WorkerAgentSpec' });

/** A worker spec as given. */
export type WorkerAgentSpecInput = z.input<typeof WorkerAgentSpecSchema>;
/** A parsed worker spec. */
export type WorkerAgentSpec = z.infer<typeof WorkerAgentSpecSchema>;

/** The seed's AgentDefinition a worker compiles to (what registerWorkerAgent answers), plus every bound that applies. */
export const WorkerAgentDefinitionSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    kind: z.enum(WORKER_AGENT_KINDS),
    native: z.boolean(),
    hidden: z.boolean(),
    /** The spec's permissions, else the kind's default (the seed's field). */
    permissions: PermissionPolicySchema,
    /** Ours: every policy a call of this worker must pass besides the session's (the kind's bound, then the spec's). */
    bounds: z.array(PermissionPolicySchema),
    model: z.string().optional(),
    prompt: z.string(),
    maxSteps: z.number().int(),
    confirmationInheritance: ConfirmationInheritanceSchema.optional(),
  })
  .meta({ id: 'WorkerAgentDefinition' });

/** A compiled worker in wire form. */
export type WorkerAgentDefinition = z.infer<typeof WorkerAgentDefinitionSchema>;

/** Body of POST /v1/sessions/:id/agents/workers (registerWorkerAgent: one; registerWorkerAgents: several). */
export const RegisterWorkerAgentsRequestSchema = z
  .object({ workers: z.array(WorkerAgentSpecSchema).min(1).max(256) })
  .strict()
  .meta({ id: 'RegisterWorkerAgentsRequest' });

/** Answer of POST /v1/sessions/:id/agents/workers: the compiled workers in request order, and every agent of the session. */
export const RegisterWorkerAgentsResponseSchema = z
  .object({ registered: z.array(WorkerAgentDefinitionSchema), agents: z.array(AgentInfoSchema) })
  .meta({ id: 'RegisterWorkerAgentsResponse' });

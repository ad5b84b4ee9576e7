import { z } from 'zod';

/** Tasks one parallel_task call runs at most (the seed's bound). */
export const MAX_PARALLEL_TASK_ITEMS = 32;

const text = (max: number) => z.string().min(1).max(max);

const jsonSchemaValue = z.looseObject({});

/**
 * What the model is shown of TaskParams: the same fields, short descriptions, no length bounds (the strict
 * schema below validates every call; a lean schema keeps every provider request small).
 */
export const TaskModelViewSchema = z.object({
  agent: z.string(),
  description: z.string(),
  prompt: z.string(),
  background: z.boolean().optional(),
  max_steps: z.number().optional(),
  output_schema: z.looseObject({}).optional().describe('JSON Schema of a JSON answer'),
});

/** The parallel_task arguments as the model is shown them. */
export const ParallelTaskModelViewSchema = z.object({
  tasks: z.array(TaskModelViewSchema),
  allow_partial_failure: z.boolean().optional(),
  timeout_ms: z.number().optional(),
  min_success_count: z.number().optional(),
});

/** The seed's TaskParams as tools validate them (no schema id: the tool schema stays inline). */
export const TaskToolParamsSchema = z
  .object({
    agent: text(200).describe(
      'Name of the agent to delegate to (general, explore, plan, verification, review, or a registered one)',
    ),
    description: text(2000).describe('A short (3-5 word) description of the task'),
    prompt: text(200_000).describe(
      'The complete instructions for the child agent; it sees nothing else of this conversation',
    ),
    background: z
      .boolean()
      .optional()
      .describe('Return at once with a task id instead of waiting for the result (default false)'),
    max_steps: z
      .number()
      .int()
      .positive()
      .max(10_000)
      .optional()
      .describe("Tool rounds the child may use (default: the agent's, else the session's)"),
    output_schema: jsonSchemaValue
      .optional()
      .describe("JSON Schema the child's final answer must satisfy (parsed into `structured`)"),
  })
  .strict();

/** The seed's TaskParams: one delegated task (the `task` tool's arguments, one item of `parallel_task`). */
export const TaskParamsSchema = TaskToolParamsSchema.meta({ id: 'TaskParams' });

/** Parsed TaskParams. */
export type TaskParams = z.infer<typeof TaskParamsSchema>;

/** The seed's parallel_task arguments as the model sees them. */
export const ParallelTaskToolParamsSchema = z
  .object({
    tasks: z
      .array(TaskToolParamsSchema)
      .min(2)
      .max(MAX_PARALLEL_TASK_ITEMS)
      .describe('The tasks to run concurrently (2 to 32)'),
    allow_partial_failure: z
      .boolean()
      .optional()
      .describe('Succeed when some tasks fail (default false: any failure fails the call)'),
    timeout_ms: z
      .number()
      .int()
      .positive()
      .max(86_400_000)
      .optional()
      .describe('Cancel the tasks still running after this many milliseconds'),
    min_success_count: z
      .number()
      .int()
      .positive()
      .max(MAX_PARALLEL_TASK_ITEMS)
      .optional()
      .describe('Succeed when at least this many tasks succeed'),
  })
  .strict();

/** The seed's parallel_task arguments. */
export const ParallelTaskParamsSchema = ParallelTaskToolParamsSchema.meta({ id: 'ParallelTaskParams' });

/** Parsed parallel_task arguments. */
export type ParallelTaskParams = z.infer<typeof ParallelTaskParamsSchema>;

/** The seed's Skill arguments. */
export const SkillCallParamsSchema = z
  .object({
    skill_name: text(200).describe('Name of the skill to run (find it with search_skills)'),
    prompt: z.string().max(200_000).optional().describe('What the skill should do this time'),
  })
  .strict();

/** Parsed Skill arguments. */
export type SkillCallParams = z.infer<typeof SkillCallParamsSchema>;

/** How a child run answers a confirmation it would ask for: ask the parent's host (default), deny, or approve. */
export const ConfirmationInheritanceSchema = z
  .enum(['inherit_parent', 'deny_on_ask', 'auto_approve'])
  .meta({ id: 'ConfirmationInheritance' });

/** A confirmation inheritance mode. */
export type ConfirmationInheritance = z.infer<typeof ConfirmationInheritanceSchema>;

const camelTask = z
  .object({
    agent: text(200),
    description: text(2000),
    prompt: text(200_000),
    background: z.boolean().optional(),
    maxSteps: z.number().int().positive().max(10_000).optional(),
    outputSchema: jsonSchemaValue.optional(),
  })
  .strict();

/** Body of POST /v1/sessions/:id/tasks: one task (the seed's `session.task()`) or several (`session.tasks()`). */
export const TaskRequestSchema = z
  .union([
    camelTask.extend({ confirmationInheritance: ConfirmationInheritanceSchema.optional() }).strict(),
    z
      .object({
        tasks: z.array(camelTask).min(2).max(MAX_PARALLEL_TASK_ITEMS),
        allowPartialFailure: z.boolean().optional(),
        timeoutMs: z.number().int().positive().max(86_400_000).optional(),
        minSuccessCount: z.number().int().positive().max(MAX_PARALLEL_TASK_ITEMS).optional(),
        confirmationInheritance: ConfirmationInheritanceSchema.optional(),
      })
      .strict(),
  ])
  .meta({ id: 'TaskRequest' });

/** A parsed task request. */
export type TaskRequest = z.infer<typeof TaskRequestSchema>;

/** Status of a subagent task (`queued`: a parallel_task child waiting for one of the session's maxParallelTasks slots). */
export const SubagentTaskStatusSchema = z
  .enum(['queued', 'running', 'completed', 'failed', 'cancelled'])
  .meta({ id: 'SubagentTaskStatus' });

/** One delegated task as the parent session keeps it (SessionSnapshotV1.subagent_tasks, GET .../tasks). */
export const SubagentTaskSnapshotSchema = z
  .object({
    task_id: z.string().min(1),
    parent_session_id: z.string().min(1),
    /** The child session that ran it. */
    session_id: z.string().min(1),
    agent: z.string(),
    description: z.string(),
    prompt: z.string(),
    /** `task` for task/parallel_task, `skill` for a Skill run. */
    kind: z.enum(['task', 'skill']),
    background: z.boolean(),
    status: SubagentTaskStatusSchema,
    /** The parent's run that delegated it (null for a host-direct task). */
    parent_run_id: z.string().nullable(),
    /** The child's run. */
    run_id: z.string().nullable(),
    started_ms: z.number().int().nonnegative(),
    finished_ms: z.number().int().nonnegative().nullable(),
    /** The child's final answer, complete (the parent's model sees a bounded cut of it). */
    output: z.string().nullable(),
    success: z.boolean().nullable(),
    /** The answer parsed against output_schema, when one was given and it parsed. */
    structured: z.unknown().optional(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    usage: z
      .object({
        prompt_tokens: z.number().int().nonnegative(),
        completion_tokens: z.number().int().nonnegative(),
        total_tokens: z.number().int().nonnegative(),
      })
      .nullable(),
  })
  .meta({ id: 'SubagentTaskSnapshot' });

/** A subagent task snapshot. */
export type SubagentTaskSnapshot = z.infer<typeof SubagentTaskSnapshotSchema>;

/** Body of GET /v1/sessions/:id/tasks. */
export const SubagentTaskListSchema = z
  .object({ tasks: z.array(SubagentTaskSnapshotSchema) })
  .meta({ id: 'SubagentTaskList' });

/** Session + task id path parameters. */
export const TaskParamsPathSchema = z
  .object({ id: z.string().min(1).max(128), taskId: z.string().min(1).max(128) })
  .strict();

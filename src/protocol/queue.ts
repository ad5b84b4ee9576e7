import { z } from 'zod';

/** Longest lane timeout (ms) a queueConfig or a lane handler may set: one day. */
export const LANE_TIMEOUT_MAX_MS = 86_400_000;
/** Largest `result` / `error` text (characters, or JSON characters) a host may complete an external task with. */
export const EXTERNAL_RESULT_MAX = 1_000_000;

/** The seed's four lanes, highest priority first. */
export const LaneSchema = z.enum(['control', 'query', 'execute', 'generate']);
/** A lane name. */
export type Lane = z.infer<typeof LaneSchema>;

/** How a lane's calls are handled: run here, handed to the host, or run here and the host notified. */
export const LaneHandlerModeSchema = z.enum(['internal', 'external', 'hybrid']);
/** A lane handler mode. */
export type LaneHandlerMode = z.infer<typeof LaneHandlerModeSchema>;

/** The seed's LaneHandlerConfig: `{mode, timeoutMs}` (default timeout 60000). */
export const LaneHandlerConfigSchema = z
  .object({
    mode: LaneHandlerModeSchema,
    timeoutMs: z.number().int().positive().max(LANE_TIMEOUT_MAX_MS).optional(),
  })
  .strict()
  .meta({ id: 'LaneHandlerConfig' });

/** Path parameters of the lane route. */
export const LaneParamsSchema = z.object({ id: z.string().min(1).max(128), lane: LaneSchema }).strict();
/** Path parameters of an external task. */
export const ExternalTaskParamsSchema = z
  .object({ id: z.string().min(1).max(128), taskId: z.string().min(1).max(200) })
  .strict();

/** Body of POST .../queue/external-tasks/:taskId (the seed's completeExternalTask result). */
export const CompleteExternalTaskBodySchema = z
  .object({
    success: z.boolean(),
    /** The tool output the model sees: a string as is, anything else as JSON. */
    result: z.unknown().optional(),
    /** Why the host failed the task (with success false). */
    error: z.string().max(EXTERNAL_RESULT_MAX).optional(),
  })
  .strict()
  .meta({ id: 'CompleteExternalTaskBody' });

/** One external task awaiting the host (the seed's ExternalTask; `id` repeats `task_id`). */
export const ExternalTaskSchema = z
  .object({
    task_id: z.string(),
    id: z.string(),
    session_id: z.string(),
    /** The lane as in the seed's event: "Control" | "Query" | "Execute" | "Generate". */
    lane: z.string(),
    /** The tool name. */
    command_type: z.string(),
    /** The tool's validated arguments. */
    payload: z.unknown(),
    timeout_ms: z.number().int().nonnegative(),
    /** When the task was handed out (epoch ms). */
    created_at_ms: z.number().int().nonnegative(),
    /** The run the call belongs to (absent for a call outside a run). */
    run_id: z.string().optional(),
  })
  .meta({ id: 'ExternalTask' });

/** An external task as stored in a session snapshot (SessionSnapshotV1.external_tasks). */
export type ExternalTaskSnapshot = z.infer<typeof ExternalTaskSchema>;

/** Answer of GET .../queue/external-tasks. */
export const ExternalTasksResponseSchema = z
  .object({ tasks: z.array(ExternalTaskSchema) })
  .meta({ id: 'ExternalTasks' });
/** Answer of POST .../queue/external-tasks/:taskId. */
export const CompleteExternalTaskResponseSchema = z.object({ completed: z.literal(true) });

/** How a settled external task ended (the details of EXTERNAL_TASK_SETTLED). */
export const ExternalTaskOutcomeSchema = z.enum(['completed', 'failed', 'timed_out', 'cancelled', 'internal']);
/** An external task outcome. */
export type ExternalTaskOutcome = z.infer<typeof ExternalTaskOutcomeSchema>;

/** One lane's figures in the stats. */
export const LaneStatsSchema = z.object({
  lane: LaneSchema,
  /** Calls waiting for a slot. */
  pending: z.number().int().nonnegative(),
  /** Calls holding a slot (running here, or handed to the host). */
  active: z.number().int().nonnegative(),
  maxConcurrency: z.number().int().positive(),
  handlerMode: LaneHandlerModeSchema,
  /** The seed's lane priority (0 = highest). */
  priority: z.number().int().nonnegative(),
  /** The lane handler's timeout (ms): how long the host has for an external task. */
  timeoutMs: z.number().int().positive(),
});

/** The seed's queueStats, with the per-lane figures of its Rust core. */
export const QueueStatsSchema = z
  .object({
    totalPending: z.number().int().nonnegative(),
    totalActive: z.number().int().nonnegative(),
    externalPending: z.number().int().nonnegative(),
    lanes: z.array(LaneStatsSchema),
  })
  .meta({ id: 'QueueStats' });
/** Queue stats as on the wire. */
export type QueueStats = z.infer<typeof QueueStatsSchema>;

/** Answer of GET .../queue: `{hasQueue, stats}` (stats null without a queue). */
export const QueueInfoResponseSchema = z.object({ hasQueue: z.boolean(), stats: QueueStatsSchema.nullable() });
/** Answer of PUT .../queue/lanes/:lane: the lane's figures after the change. */
export const LaneHandlerResponseSchema = z.object({ lane: LaneStatsSchema });

/** Longest retry delay (ms) a retryPolicy may set. */
export const RETRY_DELAY_MAX_MS = 600_000;

/** The seed's retry_policy: how a call whose lane fault is retryable (a timeout, a host failure) is tried again. */
export const RetryPolicySchema = z
  .object({
    strategy: z.enum(['exponential', 'fixed', 'none']),
    /** Retries after the first attempt (default 3). */
    maxRetries: z.number().int().min(0).max(100).optional(),
    /** First delay of the exponential strategy, doubled per retry (default 100). */
    initialDelayMs: z.number().int().min(0).max(RETRY_DELAY_MAX_MS).optional(),
    /** Delay of the fixed strategy (default initialDelayMs). */
    fixedDelayMs: z.number().int().min(0).max(RETRY_DELAY_MAX_MS).optional(),
  })
  .strict()
  .meta({ id: 'RetryPolicy' });

/** One dead-lettered call: it failed its last attempt with a retryable fault. */
export const DeadLetterSchema = z
  .object({
    command_id: z.string(),
    command_type: z.string(),
    lane: LaneSchema,
    error: z.string(),
    attempts: z.number().int().positive(),
    payload: z.unknown(),
    dead_lettered_at_ms: z.number().int().nonnegative(),
    run_id: z.string().optional(),
  })
  .meta({ id: 'DeadLetter' });
/** A dead letter as on the wire. */
export type DeadLetter = z.infer<typeof DeadLetterSchema>;

/** Answer of GET .../queue/dead-letters (oldest first; empty without enableDlq). */
export const DeadLettersResponseSchema = z.object({ deadLetters: z.array(DeadLetterSchema) });

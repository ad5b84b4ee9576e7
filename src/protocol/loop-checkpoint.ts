import { z } from 'zod';
import { ChatMessageSchema } from './chat-message.js';
import { PlanProgressSchema } from './planning.js';

/** Loop counters that decide convergence limits, carried across a resume. */
export const ConvergenceCountersSchema = z
  .object({
    tool_rounds: z.number().int().nonnegative(),
    parse_failures: z.number().int().nonnegative(),
    continuations: z.number().int().nonnegative(),
    last_call_key: z.string(),
    same_call_count: z.number().int().nonnegative(),
  })
  .strict();

/**
 * LoopCheckpoint: the loop state after a completed tool round (never in the middle of a tool), keyed by
 * run id, enough for any node to resume the run. `messages` is the working transcript (system prompt
 * first) as the next provider call would see it.
 */
export const LoopCheckpointSchema = z
  .object({
    schema_version: z.literal(1),
    run_id: z.string().min(1),
    session_id: z.string().min(1),
    turn: z.number().int().nonnegative(),
    input: z.string(),
    side_question: z.boolean(),
    messages: z.array(ChatMessageSchema),
    total_usage: z
      .object({
        prompt_tokens: z.number().int().nonnegative(),
        completion_tokens: z.number().int().nonnegative(),
        total_tokens: z.number().int().nonnegative(),
      })
      .strict(),
    tool_calls_count: z.number().int().nonnegative(),
    verification_reports: z.array(z.unknown()),
    convergence: ConvergenceCountersSchema,
    checkpoint_ms: z.number().int().nonnegative(),
    /** A planned run's plan, goal and current step (absent for unplanned runs). */
    plan: PlanProgressSchema.optional(),
    /** The W3C `traceparent` of the run's span (traces on): a run resumed from this checkpoint continues that trace. */
    trace_parent: z
      .string()
      .regex(/^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/)
      .optional(),
  })
  .strict()
  .meta({ id: 'LoopCheckpoint' });

/** A loop checkpoint. */
export type LoopCheckpoint = z.infer<typeof LoopCheckpointSchema>;

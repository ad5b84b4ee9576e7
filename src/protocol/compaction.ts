import { z } from 'zod';
import { RunErrorSchema } from './run-record.js';

/**
 * Answer of POST /v1/sessions/:id/compact (the `/compact` command run under the run lease). Counts are
 * transcript messages (GET .../history) before and after; `compacted` is false when the transcript was left
 * as it was ("Nothing to compact yet.", or a failed compaction, whose `error` says why).
 */
export const CompactResponseSchema = z
  .object({
    beforeMessages: z.number().int().nonnegative(),
    afterMessages: z.number().int().nonnegative(),
    compacted: z.boolean(),
    /** The command run that compacted (its events hold context_compacted). */
    runId: z.string(),
    /** What `/compact` answered, e.g. "Nothing to compact yet." */
    text: z.string(),
    /** The summary that now opens the transcript, when it was compacted. */
    summary: z.string().optional(),
    /** Why the compaction failed (BLOCKED_BY_HOOK, BUDGET_EXHAUSTED, COMMAND_FAILED, CANCELLED); null when it did not. */
    error: RunErrorSchema.nullable(),
  })
  .meta({ id: 'CompactResponse' });

/** The answer of POST .../compact. */
export type CompactResponse = z.infer<typeof CompactResponseSchema>;

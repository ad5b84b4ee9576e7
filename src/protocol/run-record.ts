import { z } from 'zod';
import { RUN_ERROR_CODES } from '../errors.js';

/** Run status machine; completed, failed and cancelled are terminal and sticky; queued waits in the session's run queue. */
export const RunStatusSchema = z.enum([
  'queued',
  'created',
  'planning',
  'executing',
  'verifying',
  'completed',
  'failed',
  'cancelled',
]);

/** A run's status. */
export type RunStatus = z.infer<typeof RunStatusSchema>;

/** Token usage (camelCase, as in AgentResult). */
export const UsageSchema = z.object({
  promptTokens: z.number().int().nonnegative(),
  completionTokens: z.number().int().nonnegative(),
  totalTokens: z.number().int().nonnegative(),
});

/** Token usage. */
export type Usage = z.infer<typeof UsageSchema>;

/** Add `more` into `into` (in place) and answer `into`. */
export function addUsage(into: Usage, more: Usage): Usage {
  into.promptTokens += more.promptTokens;
  into.completionTokens += more.completionTokens;
  into.totalTokens += more.totalTokens;
  return into;
}

/** AgentResult: what a finished run returns. Verification fields stay zero/skipped until verification lands. */
export const AgentResultSchema = z
  .object({
    text: z.string(),
    toolCallsCount: z.number().int().nonnegative(),
    promptTokens: z.number().int().nonnegative(),
    completionTokens: z.number().int().nonnegative(),
    totalTokens: z.number().int().nonnegative(),
    verificationStatus: z.enum(['passed', 'failed', 'needs_review', 'skipped']),
    pendingVerificationCount: z.number().int().nonnegative(),
    failedVerificationCount: z.number().int().nonnegative(),
    verificationReportCount: z.number().int().nonnegative(),
    verificationSummaryJson: z.string().nullable(),
    verificationSummaryText: z.string().nullable(),
  })
  .meta({ id: 'AgentResult' });

/** The result of a finished run. */
export type AgentResult = z.infer<typeof AgentResultSchema>;

/** A run record as kept in the session and its snapshot. */
/**
 * Why a run failed or was cancelled: a code from the run part of the error catalogue, and a message. Run
 * records stored by earlier versions may hold other codes (an errno code, say); they read as INTERNAL_ERROR
 * so such snapshots stay loadable.
 */
export const RunErrorSchema = z
  .object({
    code: z.enum(RUN_ERROR_CODES).catch('INTERNAL_ERROR'),
    message: z.string(),
    /** The provider's last HTTP status, for PROVIDER_ERROR and CIRCUIT_BREAKER_OPEN when it answered one. */
    status: z.number().int().min(100).max(599).optional(),
  })
  .meta({ id: 'RunError' });

/** A run's error. */
export type RunError = z.infer<typeof RunErrorSchema>;

export const RunRecordSchema = z
  .object({
    runId: z.string(),
    sessionId: z.string(),
    status: RunStatusSchema,
    input: z.string(),
    sideQuestion: z.boolean(),
    idempotencyKey: z.string().optional(),
    createdAtMs: z.number().int().nonnegative(),
    endedAtMs: z.number().int().nonnegative().optional(),
    result: AgentResultSchema.optional(),
    error: RunErrorSchema.optional(),
    eventCount: z.number().int().nonnegative(),
    firstRetainedSequence: z.number().int().nonnegative(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    /**
     * How many messages the session's transcript held when the run started (the transcript the run saw before its
     * own input): where a fork at this run cuts. Absent for queued runs and runs recorded before the field.
     */
    transcriptStart: z.number().int().nonnegative().optional(),
    /**
     * The session's transcript epoch when the run started: it grows whenever a run rewrites the transcript's
     * earlier messages (a compaction, a run with its own history), after which `transcriptStart` no longer indexes
     * the transcript.
     */
    transcriptEpoch: z.number().int().nonnegative().optional(),
  })
  .meta({ id: 'RunRecord' });

/** A run record. */
export type RunRecord = z.infer<typeof RunRecordSchema>;

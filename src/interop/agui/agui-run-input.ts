import { omitOptionalNulls, type RunAgentInput } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { CodeError } from '../../errors.js';
import { MAX_QUESTION_CHARS, type QuestionAnswer } from '../../protocol/questions.js';
import { formatZodIssues, zodFieldIssues, type ZodIssues } from '../../protocol/format-zod-issues.js';

/** The run id a client chooses doubles as the run's Idempotency-Key: the same bound (1-200 visible ASCII). */
const RUN_ID = /^[\x21-\x7e]{1,200}$/;

/** One answer to an interrupt, as the adapter acts on it: a confirmation's, or (`question`) a question's. */
export type AguiDecision = AguiConfirmationDecision | AguiQuestionDecision;

/** The answer to a question interrupt (reason "user_question"): free text, one of its options, or declined. */
export interface AguiQuestionDecision {
  kind: 'question';
  interruptId: string;
  answer: QuestionAnswer;
  field: string;
}

/** The answer to a tool-call interrupt (a confirmation). */
export interface AguiConfirmationDecision {
  kind: 'confirmation';
  interruptId: string;
  approved: boolean;
  reason: string | undefined;
  /** payload.always: "allow always" (a session grant for the same tool and permission subject; the broker decides). */
  always: boolean;
  /** Where the entry sits in the body, for errors naming the field. */
  field: string;
  /** The entry had status "cancelled": a rejection for a confirmation, a decline for a question. */
  cancelled?: true;
}

/** A VALIDATION_ERROR naming the first failing field of a schema's issues (the shape every route answers). */
function schemaError(issues: ZodIssues): CodeError {
  const listed = zodFieldIssues(issues, 'body', 10);
  const first = listed[0];
  return new CodeError('VALIDATION_ERROR', formatZodIssues(issues, { where: 'body' }), {
    ...(first ? { field: first.path } : {}),
    issues: listed,
  });
}

function invalid(field: string, message: string): CodeError {
  return new CodeError('VALIDATION_ERROR', `${field}: ${message}`, { field, issues: [{ path: field, message }] });
}

/** Validate a RunAgentInput body with @ag-ui/core's schema (optional nulls dropped first, as AG-UI specifies). */
export function parseRunAgentInput(body: unknown, sessionId: string): RunAgentInput {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw invalid('body', 'must be an AG-UI RunAgentInput object');
  const result = RunAgentInputSchema.safeParse(omitOptionalNulls(body, 'RunAgentInput'));
  if (!result.success) throw schemaError(result.error);
  const input = result.data as RunAgentInput;
  if (input.threadId !== sessionId)
    throw invalid('body.threadId', `must be the session id of the URL ("${sessionId}"): an AG-UI thread is a session`);
  if (!RUN_ID.test(input.runId))
    throw invalid('body.runId', "must be 1-200 visible ASCII characters (it is the run's Idempotency-Key)");
  return input;
}

/**
 * The decisions of `resume`: for a tool-call interrupt `resolved` needs payload.approved (boolean), optional
 * payload.reason and payload.always (allow always), and `cancelled` rejects; for a question interrupt
 * `resolved` needs payload {answer: text}, {option: one offered} or {declined: true}, and `cancelled` declines
 * (the ledger checks the id is a question).
 */
export function resumeDecisions(input: RunAgentInput): AguiDecision[] {
  const entries = input.resume ?? [];
  if (entries.length === 0) throw invalid('body.resume', 'must answer at least one interrupt');
  const seen = new Set<string>();
  return entries.map((entry, i) => {
    const field = `body.resume.${i}`;
    if (seen.has(entry.interruptId))
      throw invalid(`${field}.interruptId`, `answers interrupt "${entry.interruptId}" twice`);
    seen.add(entry.interruptId);
    if (entry.status === 'cancelled')
      return {
        kind: 'confirmation',
        interruptId: entry.interruptId,
        approved: false,
        reason: 'cancelled by the AG-UI client',
        always: false,
        field,
        cancelled: true,
      };
    const payload: unknown = entry.payload;
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload))
      throw invalid(
        `${field}.payload`,
        'must be an object when status is "resolved": {approved: boolean, reason?: string, always?: boolean} for a tool_call interrupt, {answer: string}, {option: string} or {declined: true} for a user_question one',
      );
    const question = questionDecision(entry.interruptId, payload as Record<string, unknown>, field);
    if (question) return question;
    const { approved, reason, always } = payload as { approved?: unknown; reason?: unknown; always?: unknown };
    if (typeof approved !== 'boolean') throw invalid(`${field}.payload.approved`, 'must be a boolean');
    if (always !== undefined && typeof always !== 'boolean')
      throw invalid(`${field}.payload.always`, 'must be a boolean');
    if (reason !== undefined && (typeof reason !== 'string' || reason.length > 2000))
      throw invalid(`${field}.payload.reason`, 'must be a string of at most 2000 characters');
    return { kind: 'confirmation', interruptId: entry.interruptId, approved, reason, always: always === true, field };
  });
}

/**
 * A payload with `answer`, `option` or `declined` (and no `approved`) answers a question; undefined for anything
 * else.
 */
function questionDecision(
  interruptId: string,
  payload: Record<string, unknown>,
  field: string,
): AguiQuestionDecision | undefined {
  const { answer, option, declined } = payload;
  if (payload.approved !== undefined || (answer === undefined && option === undefined && declined === undefined))
    return undefined;
  if ([answer, option, declined].filter((given) => given !== undefined).length > 1)
    throw invalid(
      `${field}.payload`,
      'give exactly one of answer (free text), option (one of the offered options) or declined: true',
    );
  if (declined !== undefined) {
    if (declined !== true) throw invalid(`${field}.payload.declined`, 'must be true (to decline the question)');
    return { kind: 'question', interruptId, answer: { declined: true }, field };
  }
  const [key, value] = answer !== undefined ? ['answer', answer] : ['option', option];
  if (typeof value !== 'string' || value === '' || value.length > MAX_QUESTION_CHARS)
    throw invalid(`${field}.payload.${key}`, `must be a string of 1-${MAX_QUESTION_CHARS} characters`);
  return {
    kind: 'question',
    interruptId,
    answer: key === 'answer' ? { answer: value } : { option: value },
    field,
  };
}

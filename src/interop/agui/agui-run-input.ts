import { omitOptionalNulls, type RunAgentInput } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { CodeError } from '../../errors.js';
import { formatZodIssues, zodFieldIssues, type ZodIssues } from '../../protocol/format-zod-issues.js';

/** The run id a client chooses doubles as the run's Idempotency-Key: the same bound (1-200 visible ASCII). */
const RUN_ID = /^[\x21-\x7e]{1,200}$/;

/** One answer to an interrupt, as the adapter acts on it. */
export interface AguiDecision {
  interruptId: string;
  approved: boolean;
  reason: string | undefined;
  /** payload.always: "allow always" (a session grant for the same tool and permission subject; the broker decides). */
  always: boolean;
  /** Where the entry sits in the body, for errors naming the field. */
  field: string;
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

/** The run input: the text of the last message, which must be a user message. */
export function lastUserText(input: RunAgentInput): { text: string; field: string } {
  const index = input.messages.length - 1;
  const last = input.messages[index];
  if (!last) throw invalid('body.messages', 'must end with a user message: it becomes the run input');
  if (last.role !== 'user')
    throw invalid(
      `body.messages.${index}.role`,
      `the last message must be a user message (got "${last.role}"); answer interrupts with body.resume`,
    );
  const field = `body.messages.${index}.content`;
  if (typeof last.content === 'string') {
    if (last.content.trim() === '') throw invalid(field, 'must not be empty');
    return { text: last.content, field };
  }
  const parts = last.content;
  const other = parts.findIndex((part) => part.type !== 'text');
  if (other >= 0) throw invalid(`${field}.${other}.type`, `"${parts[other]?.type}" parts are not supported: send text`);
  const text = parts.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
  if (text.trim() === '') throw invalid(field, 'must hold some text');
  return { text, field };
}

/** The decisions of `resume`: `resolved` needs payload.approved (boolean), optional payload.reason and payload.always (allow always); `cancelled` rejects. */
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
        interruptId: entry.interruptId,
        approved: false,
        reason: 'cancelled by the AG-UI client',
        always: false,
        field,
      };
    const payload: unknown = entry.payload;
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload))
      throw invalid(
        `${field}.payload`,
        'must be an object {approved: boolean, reason?: string, always?: boolean} when status is "resolved"',
      );
    const { approved, reason, always } = payload as { approved?: unknown; reason?: unknown; always?: unknown };
    if (typeof approved !== 'boolean') throw invalid(`${field}.payload.approved`, 'must be a boolean');
    if (always !== undefined && typeof always !== 'boolean')
      throw invalid(`${field}.payload.always`, 'must be a boolean');
    if (reason !== undefined && (typeof reason !== 'string' || reason.length > 2000))
      throw invalid(`${field}.payload.reason`, 'must be a string of at most 2000 characters');
    return { interruptId: entry.interruptId, approved, reason, always: always === true, field };
  });
}

import type { ToolErrorKind } from '../../../protocol/seed-event-payloads.js';
import type { ToolResult } from '../define-tool.js';
import type { BatchRun, InvocationOutcome } from './batch-runner.js';

/** Most bytes of one item's output shown in the batch summary. */
export const MAX_ITEM_SUMMARY_BYTES = 20 * 1024;
/** Bytes of item output the whole summary may hold, shared by the items (at least 1 KiB each). */
export const SUMMARY_OUTPUT_BUDGET = 90 * 1024;
const MIN_ITEM_SUMMARY_BYTES = 1024;

/** The seed's overall batch status. */
export type BatchStatus = 'complete' | 'partial_failure' | 'failed';

/** The seed's execution mode: one serial step, one concurrent step, or several steps. */
export type BatchExecutionMode = 'serial' | 'parallel' | 'staged';

/** One item as the batch metadata reports it (the seed's fields plus our `status` and `truncated`). */
export interface BatchItemReport {
  readonly index: number;
  readonly step: number;
  readonly id: string | null;
  readonly tool: string;
  readonly success: boolean;
  /** Null when the item never ran (cancelled before it started). */
  readonly exit_code: number | null;
  /** Bytes of the child's output (as the invoker returned it, before the summary's cut). */
  readonly output_bytes: number;
  readonly error_kind: ToolErrorKind | null;
  readonly metadata: Record<string, unknown> | null;
  readonly status: 'ok' | 'error' | 'skipped';
  /** True when the child's output was truncated by the invoker or here, for the summary. */
  readonly truncated: boolean;
}

/** A `$ref` that could not be bound: the item was not run. */
export interface BatchBindingError {
  readonly index: number;
  readonly id: string | null;
  readonly message: string;
}

/** The byte budget of each item's output in a summary of `count` items. */
export function itemSummaryBytes(count: number): number {
  return Math.min(
    MAX_ITEM_SUMMARY_BYTES,
    Math.max(MIN_ITEM_SUMMARY_BYTES, Math.floor(SUMMARY_OUTPUT_BUDGET / Math.max(1, count))),
  );
}

/**
 * Turn a batch run into the tool result: one block per item, the seed's metadata; success unless every
 * item failed (then exit 1 with a `partial_failure` error kind).
 */
export function summarizeBatch(run: BatchRun, requestedConcurrency: number): ToolResult {
  const budget = itemSummaryBytes(run.outcomes.length);
  const total = run.outcomes.length;
  const failedIndices = run.outcomes.filter((outcome) => outcome.status !== 'ok').map((outcome) => outcome.index);
  const failures = failedIndices.length;
  const status: BatchStatus = failures === 0 ? 'complete' : failures === total ? 'failed' : 'partial_failure';
  const results: BatchItemReport[] = [];
  const blocks = run.outcomes.map((outcome) => {
    const shown = capBytes(outcome.output, budget);
    results.push(report(outcome, shown.truncated));
    const name = outcome.id === undefined ? outcome.tool : `${outcome.tool} · ${outcome.id}`;
    const body = shown.truncated
      ? `${shown.text}\n[output cut at ${budget} bytes of ${shown.totalBytes} in this summary]`
      : shown.text;
    const text = outcome.status === 'ok' ? (body === '' ? '(no output)' : body) : `ERROR: ${body}`;
    return `--- [${outcome.index} / step ${outcome.step}: ${name}] ---\n${text}`;
  });
  const notes: string[] = [];
  if (run.cancelled) notes.push('The batch was cancelled; invocations that had not started were skipped.');
  if (status === 'partial_failure') {
    notes.push(
      `${failures} of ${total} invocation(s) failed (failed_indices: ${failedIndices.join(', ')}); the other results are valid, so retry only failed indices.`,
    );
  } else if (status === 'failed') {
    notes.push(`All ${total} invocation(s) failed.`);
  }
  const bindingErrors: BatchBindingError[] = run.outcomes
    .filter((outcome) => outcome.bindingError !== undefined)
    .map((outcome) => ({ index: outcome.index, id: outcome.id ?? null, message: outcome.bindingError ?? '' }));
  const metadata = {
    status,
    requested_concurrency: requestedConcurrency,
    applied_concurrency: run.appliedConcurrency,
    execution_mode: executionMode(run),
    steps: run.steps.length,
    highest_step: run.steps[run.steps.length - 1] ?? 1,
    total_count: total,
    success_count: total - failures,
    failure_count: failures,
    failed_indices: failedIndices,
    binding_errors: bindingErrors,
    results,
  };
  const output = [...blocks, ...(notes.length > 0 ? [notes.join('\n')] : [])].join('\n\n');
  if (status === 'failed')
    return { output, exitCode: 1, metadata, errorKind: { type: 'partial_failure', failed: failures, total } };
  return { output, exitCode: 0, metadata };
}

function executionMode(run: BatchRun): BatchExecutionMode {
  if (run.steps.length > 1) return 'staged';
  return run.appliedConcurrency > 1 ? 'parallel' : 'serial';
}

function report(outcome: InvocationOutcome, cut: boolean): BatchItemReport {
  return {
    index: outcome.index,
    step: outcome.step,
    id: outcome.id ?? null,
    tool: outcome.tool,
    success: outcome.status === 'ok',
    exit_code: outcome.exitCode,
    output_bytes: Buffer.byteLength(outcome.output, 'utf8'),
    error_kind: outcome.errorKind ?? null,
    metadata: outcome.metadata ?? null,
    status: outcome.status,
    truncated: outcome.truncated || cut,
  };
}

function capBytes(text: string, maxBytes: number): { text: string; truncated: boolean; totalBytes: number } {
  const totalBytes = Buffer.byteLength(text, 'utf8');
  if (totalBytes <= maxBytes) return { text, truncated: false, totalBytes };
  const cut = Buffer.from(text, 'utf8').subarray(0, maxBytes).toString('utf8');
  // A multi-byte character split by the cut decodes to U+FFFD at the end; drop it.
  return { text: cut.endsWith('\uFFFD') ? cut.slice(0, -1) : cut, truncated: true, totalBytes };
}

import type { ToolResult } from '../define-tool.js';
import type { BatchRun, InvocationOutcome } from './batch-runner.js';

/** Most bytes of one item's output shown in the batch summary. */
export const MAX_ITEM_SUMMARY_BYTES = 20 * 1024;
/** Bytes of item output the whole summary may hold, shared by the items (at least 1 KiB each). */
export const SUMMARY_OUTPUT_BUDGET = 90 * 1024;
const MIN_ITEM_SUMMARY_BYTES = 1024;

/** One item as the batch reports it (output capped for the summary). */
export interface BatchItemReport {
  readonly id: string;
  readonly tool: string;
  readonly step: number;
  readonly status: 'ok' | 'error' | 'skipped';
  readonly exitCode: number | null;
  readonly output: string;
  /** True when the child's output was truncated by the invoker or here, for the summary. */
  readonly truncated: boolean;
}

/** The byte budget of each item's output in a summary of `count` items. */
export function itemSummaryBytes(count: number): number {
  return Math.min(MAX_ITEM_SUMMARY_BYTES, Math.max(MIN_ITEM_SUMMARY_BYTES, Math.floor(SUMMARY_OUTPUT_BUDGET / Math.max(1, count))));
}

/** Turn a batch run into the tool result: readable summary, exit code 0 only when every item is ok. */
export function summarizeBatch(run: BatchRun): ToolResult {
  const budget = itemSummaryBytes(run.outcomes.length);
  const items = run.outcomes.map((outcome) => reportItem(outcome, budget));
  const count = (status: BatchItemReport['status']): number => items.filter((item) => item.status === status).length;
  const steps = new Set(items.map((item) => item.step)).size;
  const header = [
    `batch: ${items.length} invocation${items.length === 1 ? '' : 's'} in ${steps} step${steps === 1 ? '' : 's'}: ` +
      `${count('ok')} ok, ${count('error')} error, ${count('skipped')} skipped.`,
  ];
  if (run.cancelled) header.push('The batch was cancelled; items that had not started were skipped.');
  const sections = items.map((item) => {
    const exit = item.exitCode === null ? '' : `, exit ${item.exitCode}`;
    const title = `=== ${item.id}: ${item.tool} (step ${item.step}) ${item.status}${exit} ===`;
    return `${title}\n${item.output === '' ? '(no output)' : item.output}`;
  });
  return {
    output: [header.join('\n'), ...sections].join('\n\n'),
    exitCode: items.every((item) => item.status === 'ok') ? 0 : 1,
    metadata: { batch: { items } },
  };
}

function reportItem(outcome: InvocationOutcome, budget: number): BatchItemReport {
  const capped = capBytes(outcome.output, budget);
  const output = capped.truncated
    ? `${capped.text}\n[output cut at ${budget} bytes of ${capped.totalBytes} in this summary]`
    : capped.text;
  return {
    id: outcome.id,
    tool: outcome.tool,
    step: outcome.step,
    status: outcome.status,
    exitCode: outcome.exitCode,
    output,
    truncated: outcome.truncated || capped.truncated,
  };
}

function capBytes(text: string, maxBytes: number): { text: string; truncated: boolean; totalBytes: number } {
  const totalBytes = Buffer.byteLength(text, 'utf8');
  if (totalBytes <= maxBytes) return { text, truncated: false, totalBytes };
  const cut = Buffer.from(text, 'utf8').subarray(0, maxBytes).toString('utf8');
  // A multi-byte character split by the cut decodes to U+FFFD at the end; drop it.
  return { text: cut.endsWith('\uFFFD') ? cut.slice(0, -1) : cut, truncated: true, totalBytes };
}

import type { NestedInvoker } from '../define-tool.js';
import { bindRefs, type RefResult, type RefSource } from './batch-ref.js';

/** The message an item gets when it tries to call `batch` from inside a batch. */
export const RECURSIVE_BATCH_ERROR = 'recursive batch calls are not allowed';

/** One invocation of a batch with its step settled (explicit, or its index by default). */
export interface PlannedInvocation {
  readonly id: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly step: number;
}

/** What happened to one invocation; output is the child's full (invoker-capped) output. */
export interface InvocationOutcome extends RefResult {
  readonly id: string;
  readonly tool: string;
  readonly step: number;
}

/** How the runner is allowed to work. */
export interface BatchRunOptions {
  readonly nested: NestedInvoker;
  readonly signal: AbortSignal;
  /** Upper bound on concurrently running items of one all-read-only step. */
  readonly maxConcurrency: number;
  /** The batch tool's own name, refused as a child. */
  readonly selfName: string;
}

/** The outcomes of a batch run, in the order the invocations were listed. */
export interface BatchRun {
  readonly outcomes: InvocationOutcome[];
  /** True when the run's signal was aborted before every item had finished. */
  readonly cancelled: boolean;
}

/**
 * Run the invocations step by step (ascending); a step whose tools are all read-only runs its items
 * concurrently up to `maxConcurrency`, any other step runs them one by one in listed order.
 */
export async function runBatch(invocations: readonly PlannedInvocation[], options: BatchRunOptions): Promise<BatchRun> {
  const sources = new Map<string, RefSource & { result?: InvocationOutcome }>();
  for (const item of invocations) sources.set(item.id, { step: item.step });

  const steps = [...new Set(invocations.map((item) => item.step))].sort((a, b) => a - b);
  for (const step of steps) {
    const members = invocations.filter((item) => item.step === step);
    const limit = members.every((item) => options.nested.describe(item.tool)?.readOnly === true) ? options.maxConcurrency : 1;
    await runPool(members, limit, async (item) => {
      const outcome = options.signal.aborted ? skipped(item) : await runOne(item, sources, options);
      sources.set(item.id, { step: item.step, result: outcome });
    });
  }
  const outcomes = invocations.map((item) => sources.get(item.id)?.result ?? skipped(item));
  return { outcomes, cancelled: options.signal.aborted && outcomes.some((outcome) => outcome.status !== 'ok') };
}

async function runOne(item: PlannedInvocation, sources: ReadonlyMap<string, RefSource>, options: BatchRunOptions): Promise<InvocationOutcome> {
  if (item.tool === options.selfName) return failed(item, RECURSIVE_BATCH_ERROR);
  const bound = bindRefs(item.args, item.step, sources);
  if (!bound.ok) return failed(item, `${bound.error}. The item was not run.`);
  try {
    const result = await options.nested.call(item.tool, bound.value, item.id);
    return {
      id: item.id,
      tool: item.tool,
      step: item.step,
      status: result.exitCode === 0 ? 'ok' : 'error',
      exitCode: result.exitCode,
      output: result.output,
      truncated: result.truncated,
      ...(result.metadata ? { metadata: result.metadata } : {}),
    };
  } catch (error) {
    // The invoker turns tool faults into results; a throw here is an invoker fault, kept to this item.
    return failed(item, `${item.tool} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function failed(item: PlannedInvocation, message: string): InvocationOutcome {
  return { id: item.id, tool: item.tool, step: item.step, status: 'error', exitCode: 1, output: message, truncated: false };
}

function skipped(item: PlannedInvocation): InvocationOutcome {
  return {
    id: item.id,
    tool: item.tool,
    step: item.step,
    status: 'skipped',
    exitCode: null,
    output: 'Not run: the batch was cancelled before this item started.',
    truncated: false,
  };
}

/** Run `work` over the items with at most `limit` in flight, starting them in listed order. */
async function runPool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next];
      next += 1;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}

import type { ToolErrorKind } from '../../../protocol/seed-event-payloads.js';
import type { NestedInvoker } from '../define-tool.js';
import { bindRefs, type BindResult, type RefResult, type RefSource } from './batch-ref.js';

/** The message an item gets when it tries to call `batch` from inside a batch. */
export const RECURSIVE_BATCH_ERROR = 'recursive batch calls are not allowed';

/** One invocation of a batch with its step settled (explicit, or 1 by default). */
export interface PlannedInvocation {
  /** Position in the `invocations` list (0-based). */
  readonly index: number;
  /** The optional id; only invocations with an id can be referenced by `$ref`. */
  readonly id?: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly step: number;
}

/** What happened to one invocation; output is the child's full (invoker-capped) output. */
export interface InvocationOutcome extends RefResult {
  readonly index: number;
  readonly id?: string;
  readonly tool: string;
  readonly step: number;
  /** Why it failed, when the child (or the batch) said so in the seed's terms. */
  readonly errorKind?: ToolErrorKind;
  /** Set when a `$ref` in its arguments could not be bound (the item was not run). */
  readonly bindingError?: string;
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

/** The outcomes of a batch run, in the order the invocations were listed, and how they were run. */
export interface BatchRun {
  readonly outcomes: InvocationOutcome[];
  /** True when the run's signal was aborted before every item had finished. */
  readonly cancelled: boolean;
  /** The distinct steps, ascending. */
  readonly steps: number[];
  /** Highest number of items allowed in flight at once in any step (1 when every step ran serially). */
  readonly appliedConcurrency: number;
}

/**
 * Run the invocations step by step (ascending); a step whose bound calls are all read-only runs its
 * items concurrently up to `maxConcurrency`, any other step runs them one by one in listed order.
 */
export async function runBatch(invocations: readonly PlannedInvocation[], options: BatchRunOptions): Promise<BatchRun> {
  const sources = new Map<string, RefSource>();
  for (const item of invocations) if (item.id !== undefined) sources.set(item.id, { step: item.step });
  const results = new Map<number, InvocationOutcome>();

  const steps = [...new Set(invocations.map((item) => item.step))].sort((a, b) => a - b);
  let appliedConcurrency = 1;
  for (const step of steps) {
    const members = invocations.filter((item) => item.step === step);
    // References only reach earlier steps, so a step's arguments are bound before any of its items runs,
    // and read-only is decided per call on the bound arguments (git status is, git checkout is not).
    const bound = new Map(members.map((item) => [item.index, bindRefs(item.args, item.step, sources)] as const));
    const readOnly = members.every((item) => {
      const args = bound.get(item.index);
      return (
        args?.ok === true &&
        item.tool !== options.selfName &&
        options.nested.describe(item.tool, args.value)?.readOnly === true
      );
    });
    const limit = readOnly ? Math.max(1, Math.min(options.maxConcurrency, members.length)) : 1;
    appliedConcurrency = Math.max(appliedConcurrency, limit);
    await runPool(members, limit, async (item) => {
      const binding = bound.get(item.index) ?? bindRefs(item.args, item.step, sources);
      const outcome = options.signal.aborted ? skipped(item) : await runOne(item, binding, options);
      results.set(item.index, outcome);
      if (item.id !== undefined) sources.set(item.id, { step: item.step, result: outcome });
    });
  }
  const outcomes = invocations.map((item) => results.get(item.index) ?? skipped(item));
  return {
    outcomes,
    cancelled: options.signal.aborted && outcomes.some((outcome) => outcome.status !== 'ok'),
    steps,
    appliedConcurrency,
  };
}

async function runOne(
  item: PlannedInvocation,
  bound: BindResult,
  options: BatchRunOptions,
): Promise<InvocationOutcome> {
  if (item.tool === options.selfName)
    return failed(item, RECURSIVE_BATCH_ERROR, { type: 'unsupported', message: RECURSIVE_BATCH_ERROR });
  if (!bound.ok) {
    const message = `${bound.error}. The item was not run.`;
    return { ...failed(item, message, { type: 'invalid_argument', message: bound.error }), bindingError: bound.error };
  }
  try {
    // Items without an id are named by their position in the child's call id.
    const result = await options.nested.call(item.tool, bound.value, item.id ?? `#${item.index}`);
    return {
      ...identity(item),
      status: result.exitCode === 0 ? 'ok' : 'error',
      exitCode: result.exitCode,
      output: result.output,
      truncated: result.truncated,
      ...(result.metadata ? { metadata: result.metadata } : {}),
      ...(result.errorKind ? { errorKind: result.errorKind } : {}),
    };
  } catch (error) {
    // The invoker turns tool faults into results; a throw here is an invoker fault, kept to this item.
    return failed(item, `${item.tool} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function identity(item: PlannedInvocation): Pick<InvocationOutcome, 'index' | 'id' | 'tool' | 'step'> {
  return { index: item.index, ...(item.id !== undefined ? { id: item.id } : {}), tool: item.tool, step: item.step };
}

function failed(item: PlannedInvocation, message: string, errorKind?: ToolErrorKind): InvocationOutcome {
  return {
    ...identity(item),
    status: 'error',
    exitCode: 1,
    output: message,
    truncated: false,
    ...(errorKind ? { errorKind } : {}),
  };
}

function skipped(item: PlannedInvocation): InvocationOutcome {
  return {
    ...identity(item),
    status: 'skipped',
    exitCode: null,
    output: 'Not run: the batch was cancelled before this item started.',
    truncated: false,
    errorKind: { type: 'cancelled', op: item.tool },
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

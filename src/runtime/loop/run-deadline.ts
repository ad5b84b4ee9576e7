import { createInvocationContext, type InvocationContext } from '../invocation/invocation-context.js';
import { RunDeadlineError } from '../invocation/run-deadline-error.js';

const MAX_TIMER_MS = 2 ** 31 - 1;

/** A run context whose signal also fires at the run's deadline; `dispose` releases the timer and listener. */
export interface DeadlineScope {
  readonly ctx: InvocationContext;
  dispose(): void;
}

/**
 * Derive a context whose signal aborts when the run is cancelled (same reason) or when
 * `maxExecutionTimeMs` has passed (reason RunDeadlineError), so the deadline also stops the in-flight
 * provider call or tool instead of waiting for the next turn.
 */
export function withDeadline(ctx: InvocationContext, deadlineMs: number): DeadlineScope {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(ctx.signal.reason);
  if (ctx.signal.aborted) onAbort();
  else ctx.signal.addEventListener('abort', onAbort, { once: true });
  const limitMs = ctx.governance.maxExecutionTimeMs;
  let timer: NodeJS.Timeout | undefined;
  // setTimeout overflows past 2^31-1 ms (about 24.8 days) and would fire at once; re-arm instead.
  const arm = (): void => {
    const remaining = Math.max(0, deadlineMs - ctx.hostEnv.now());
    timer =
      remaining > MAX_TIMER_MS
        ? setTimeout(arm, MAX_TIMER_MS)
        : setTimeout(() => controller.abort(new RunDeadlineError(limitMs)), remaining);
  };
  arm();
  return {
    ctx: createInvocationContext({ ...ctx, signal: controller.signal }),
    dispose(): void {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
    },
  };
}

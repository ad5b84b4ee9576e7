/** An AbortSignal linked to others, with an explicit release of the links. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Abort the linked signal itself (for example on a timeout). */
  abort(reason?: unknown): void;
  /** Remove the listeners added to the source signals; call once the operation is over. */
  dispose(): void;
}

/**
 * A signal that aborts when any source aborts. Unlike AbortSignal.any, the listeners on the sources are
 * removed by dispose, so linking a long-lived signal (a run's, an engine's) per request does not leak
 * (nodejs/node#55351).
 */
export function linkSignals(sources: ReadonlyArray<AbortSignal | undefined>): LinkedSignal {
  const controller = new AbortController();
  const linked = sources.filter((s): s is AbortSignal => s !== undefined);
  const onAbort = (event: Event) => controller.abort((event.target as AbortSignal).reason);
  for (const source of linked) {
    if (source.aborted) {
      controller.abort(source.reason);
      break;
    }
  }
  if (!controller.signal.aborted)
    for (const source of linked) source.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    dispose: () => {
      for (const source of linked) source.removeEventListener('abort', onAbort);
    },
  };
}

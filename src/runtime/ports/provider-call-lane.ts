import type { EventSink } from '../invocation/invocation-context.js';

/** Gives back a provider call's slot; `ok` says whether the request succeeded (counted with enableMetrics). */
export type ProviderCallRelease = (ok: boolean) => void;

/**
 * The lane a queued session's provider requests wait in (queueConfig: the `generate` lane, whose
 * `generateConcurrency` bounds the requests in flight, a session's task children included). Sessions without a
 * queue have none: their provider calls do not wait.
 */
export interface ProviderCallLane {
  /** Wait for a slot; undefined when `signal` aborted first (the waiter leaves the line). */
  enter(signal: AbortSignal, emit: EventSink): Promise<ProviderCallRelease | undefined>;
}

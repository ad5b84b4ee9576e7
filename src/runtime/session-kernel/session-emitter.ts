import type { RuntimeEventPayloads, RuntimeEventType } from '../../protocol/runtime-event.js';
import type { SessionLabels } from '../../protocol/session-snapshot.js';
import { EventOrigin } from '../events/event-origin.js';
import type { SessionEventLog } from '../events/session-event-log.js';
import type { HostEnv } from '../ports/host-env.js';
import type { SessionOwnership } from '../ports/session-ownership.js';
import type { SessionKey } from '../../stores/session-key.js';

/**
 * Emit one typed runtime event of the session, tied to a run when `runId` is given; `traceId` (a traced run's
 * agent_end) is stamped into the event's metadata as `trace_id`.
 */
export type SessionEmit = <T extends RuntimeEventType>(
  runId: string | undefined,
  type: T,
  payload: RuntimeEventPayloads[T],
  traceId?: string,
) => void;

/** Sees every event a session emits (metrics); it runs on the emit path, so it must be cheap and never throw. */
export type SessionEventObserver = <T extends RuntimeEventType>(type: T, payload: RuntimeEventPayloads[T]) => void;

/** What stamping and publishing a session's events needs. */
export interface SessionEmitterDeps {
  readonly sessionId: string;
  /** The session's key (tenant and id), which its shared stream is published under. */
  readonly sessionKey: SessionKey;
  readonly labels: SessionLabels;
  readonly events: SessionEventLog;
  readonly hostEnv: HostEnv;
  readonly ownership: SessionOwnership;
  /** Its `abandoned` is true once another node took the session over: nothing more is published from here. */
  readonly lifecycle: { readonly abandoned: boolean };
  /** Told of every event after it is appended (the server's metrics). */
  readonly onEvent?: SessionEventObserver | undefined;
}

/**
 * The session's emit: record the event (its run, the session's identity labels, the time) in the
 * session's event log and, in a cluster, publish it to the session's stream for subscribers on other
 * nodes. The log keeps one shared EventOrigin per run; an envelope is built only for live listeners or
 * the cluster stream, so an event nobody follows allocates none.
 */
export function createSessionEmit(deps: SessionEmitterDeps): SessionEmit {
  // The origins in use: every event of the session but those of a new run reuses one.
  let runless: EventOrigin | undefined;
  let current: EventOrigin | undefined;
  const originOf = (runId: string | undefined): EventOrigin => {
    if (runId === undefined) return (runless ??= new EventOrigin(undefined, deps.sessionId, deps.labels));
    if (current?.runId !== runId) current = new EventOrigin(runId, deps.sessionId, deps.labels);
    return current;
  };
  return (runId, type, payload, traceId) => {
    const clustered = deps.ownership.clustered;
    const origin =
      traceId === undefined ? originOf(runId) : new EventOrigin(runId, deps.sessionId, deps.labels, traceId);
    const envelope = deps.events.record(origin, type, payload, deps.hostEnv.now(), clustered);
    if (envelope !== undefined && clustered && !deps.lifecycle.abandoned)
      deps.ownership.publish(deps.sessionKey, envelope);
    deps.onEvent?.(type, payload);
  };
}

import type { RuntimeEventPayloads, RuntimeEventType } from '../../protocol/runtime-event.js';
import type { SessionLabels } from '../../protocol/session-snapshot.js';
import type { SessionEventLog, UnstampedEvent } from '../events/session-event-log.js';
import type { HostEnv } from '../ports/host-env.js';
import type { SessionOwnership } from '../ports/session-ownership.js';
import type { SessionKey } from '../../stores/session-key.js';

/** Emit one typed runtime event of the session, tied to a run when `runId` is given. */
export type SessionEmit = <T extends RuntimeEventType>(runId: string | undefined, type: T, payload: RuntimeEventPayloads[T]) => void;

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
  /** True once another node took the session over: nothing more is published from here. */
  abandoned(): boolean;
  /** Told of every event after it is appended (the server's metrics). */
  readonly onEvent?: SessionEventObserver | undefined;
}

/**
 * The metadata of one emitted event, in wire order. Built by a constructor rather than as a literal that
 * grows: V8 then gives every instance in-object room for the labels and for the two sequences the log
 * stamps afterwards, so a retained event needs no separate out-of-object property store.
 */
class EventMetadataRecord {
  declare run_id?: string;
  declare session_id: string;
  declare timestamp_ms: number;
  declare tenant_id?: string;
  declare principal?: string;
  declare agent_template_id?: string;
  declare correlation_id?: string;

  constructor(runId: string | undefined, sessionId: string, timestampMs: number, labels: SessionLabels) {
    if (runId !== undefined) this.run_id = runId;
    this.session_id = sessionId;
    this.timestamp_ms = timestampMs;
    if (labels.tenantId !== undefined) this.tenant_id = labels.tenantId;
    if (labels.principal !== undefined) this.principal = labels.principal;
    if (labels.agentTemplateId !== undefined) this.agent_template_id = labels.agentTemplateId;
    if (labels.correlationId !== undefined) this.correlation_id = labels.correlationId;
  }
}

/**
 * The session's emit: stamp the event's metadata (run, session, time, identity labels), append it to the
 * session's event log and, in a cluster, publish it to the session's stream for subscribers on other nodes.
 */
export function createSessionEmit(deps: SessionEmitterDeps): SessionEmit {
  return (runId, type, payload) => {
    // One envelope and one metadata object per event, which the log stamps in place and keeps.
    const metadata: UnstampedEvent['metadata'] = new EventMetadataRecord(runId, deps.sessionId, deps.hostEnv.now(), deps.labels);
    const stamped = deps.events.append({ version: 1, type, payload, metadata });
    if (deps.ownership.clustered && !deps.abandoned()) deps.ownership.publish(deps.sessionKey, stamped);
    deps.onEvent?.(type, payload);
  };
}

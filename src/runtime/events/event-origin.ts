import type { EventEnvelope } from '../../protocol/event-envelope.js';
import type { SessionLabels } from '../../protocol/session-snapshot.js';

/**
 * The metadata of one event, in wire order (JSON on WebSocket, SSE and REST follows insertion order).
 * Assigned in a constructor rather than grown as a literal, so V8 gives every instance in-object room
 * for all its fields; absent labels and the run-less events' `sequence` stay absent, not undefined.
 */
class EventMetadataRecord {
  declare run_id?: string;
  declare session_id: string;
  declare timestamp_ms: number;
  declare tenant_id?: string;
  declare principal?: string;
  declare agent_template_id?: string;
  declare correlation_id?: string;
  declare trace_id?: string;
  declare sequence?: number;
  declare session_sequence: number;
  [key: string]: unknown;

  constructor(origin: EventOrigin, timestampMs: number, sequence: number, sessionSequence: number) {
    const { runId, labels } = origin;
    if (runId !== undefined) this.run_id = runId;
    this.session_id = origin.sessionId;
    this.timestamp_ms = timestampMs;
    if (labels.tenantId !== undefined) this.tenant_id = labels.tenantId;
    if (labels.principal !== undefined) this.principal = labels.principal;
    if (labels.agentTemplateId !== undefined) this.agent_template_id = labels.agentTemplateId;
    if (labels.correlationId !== undefined) this.correlation_id = labels.correlationId;
    if (origin.traceId !== undefined) this.trace_id = origin.traceId;
    if (runId !== undefined) this.sequence = sequence;
    this.session_sequence = sessionSequence;
  }
}

/** The metadata fields an origin is read from (as the wire names them). */
export interface OriginMetadata {
  run_id?: string;
  session_id: string;
  tenant_id?: string;
  principal?: string;
  agent_template_id?: string;
  correlation_id?: string;
  trace_id?: string;
}

/**
 * What every event of one run (or every run-less event of a session) shares: the run, the session and
 * the session's identity labels, which are immutable per session. The event log keeps one per run and
 * builds an event's envelope from it and the event's own fields only when someone reads the event.
 */
export class EventOrigin {
  constructor(
    readonly runId: string | undefined,
    readonly sessionId: string,
    readonly labels: SessionLabels,
    /** The trace of a traced run, on its agent_end only (metadata `trace_id`). */
    readonly traceId?: string,
  ) {}

  /** The origin of an event's metadata as the wire names it (labels read from their snake_case keys). */
  static of(metadata: OriginMetadata): EventOrigin {
    const labels: SessionLabels = {};
    if (metadata.tenant_id !== undefined) labels.tenantId = metadata.tenant_id;
    if (metadata.principal !== undefined) labels.principal = metadata.principal;
    if (metadata.agent_template_id !== undefined) labels.agentTemplateId = metadata.agent_template_id;
    if (metadata.correlation_id !== undefined) labels.correlationId = metadata.correlation_id;
    return new EventOrigin(metadata.run_id, metadata.session_id, labels, metadata.trace_id);
  }

  /** True when both origins stamp the same metadata (same run, session and labels). */
  sameAs(other: EventOrigin): boolean {
    if (other === this) return true;
    const a = this.labels;
    const b = other.labels;
    return (
      other.runId === this.runId &&
      other.sessionId === this.sessionId &&
      other.traceId === this.traceId &&
      (a === b ||
        (a.tenantId === b.tenantId &&
          a.principal === b.principal &&
          a.agentTemplateId === b.agentTemplateId &&
          a.correlationId === b.correlationId))
    );
  }

  /** A fresh envelope of one event of this origin (`sequence` is ignored for a run-less origin). */
  envelope(
    type: string,
    payload: Record<string, unknown>,
    timestampMs: number,
    sequence: number,
    sessionSequence: number,
  ): EventEnvelope {
    return {
      version: 1,
      type,
      payload,
      metadata: new EventMetadataRecord(this, timestampMs, sequence, sessionSequence),
    };
  }
}

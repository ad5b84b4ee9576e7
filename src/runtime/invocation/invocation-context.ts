import type { RuntimeEventPayloads, RuntimeEventType } from '../../protocol/runtime-event.js';
import type { HostEnv } from '../ports/host-env.js';
import type { TraceSpan } from '../ports/telemetry.js';

/** The governance values a run was admitted with; frozen for the run's lifetime. */
export interface GovernanceSnapshot {
  readonly maxToolRounds: number;
  readonly maxParseRetries: number;
  readonly toolTimeoutMs: number;
  readonly circuitBreakerThreshold: number;
  readonly duplicateToolCallThreshold: number;
  readonly continuationEnabled: boolean;
  readonly maxContinuationTurns: number;
  readonly maxExecutionTimeMs: number;
  readonly toolOutputBytes: number;
  /** Compact the transcript before a turn whose context passes `autoCompactThreshold` of `maxContextTokens`. */
  readonly autoCompact: boolean;
  readonly autoCompactThreshold: number;
  /** The context window compaction measures against (SessionOptions, else the model's limit.context, else 200k). */
  readonly maxContextTokens: number;
  /** The transcript bound (limits.maxTranscriptBytes / maxTranscriptMessages): past it a turn compacts first or the run fails. */
  readonly maxTranscriptBytes: number;
  readonly maxTranscriptMessages: number;
}

/** Emits one typed runtime event for the run. */
export type EventSink = <T extends RuntimeEventType>(type: T, payload: RuntimeEventPayloads[T]) => void;

/** Everything one admitted run carries: ids, the one AbortSignal, the event sink and governance. */
export interface InvocationContext {
  readonly runId: string;
  readonly sessionId: string;
  readonly workspace: string;
  readonly signal: AbortSignal;
  readonly emit: EventSink;
  readonly governance: GovernanceSnapshot;
  readonly hostEnv: HostEnv;
  /** The run's span when traces are exported: provider and tool calls are its children. */
  readonly trace?: TraceSpan | undefined;
}

/** Build a frozen InvocationContext. */
export function createInvocationContext(fields: InvocationContext): InvocationContext {
  return Object.freeze({ ...fields, governance: Object.freeze({ ...fields.governance }) });
}

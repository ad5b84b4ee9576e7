import type { AgentEventEnvelope } from '../protocol/agent-event-envelope.js';
import { readAgentEventEnvelope } from '../protocol/agent-event-envelope.js';
import type { WsControlFrame } from '../protocol/ws-messages.js';
import { toA3sError } from './a3s-error.js';

/** A replay gap: events with `requested_after < session_sequence < first_available` were dropped by retention. */
export type ReplayGap = Extract<WsControlFrame, { type: 'replay_gap' }>['payload'];

/** The client's own `replay_gap` event: the control frame's payload, empty metadata (it moves no cursor). */
export interface ReplayGapEvent {
  version: 1;
  type: 'replay_gap';
  payload: ReplayGap;
  metadata: Record<string, never>;
}

/** The convenience fields the seed's Node SDK reads from the payload (undefined when the event has no such field). */
export interface AgentEventFields {
  text?: string;
  toolName?: string;
  toolId?: string;
  toolOutput?: string;
  exitCode?: number;
  turn?: number;
  prompt?: string;
  error?: string;
  totalTokens?: number;
  payloadJson: string;
  metadataJson: string;
  verificationSummaryJson?: string;
  verificationSummaryText?: string;
  errorKindJson?: string;
}

/**
 * An event as the seed's Node SDK gives it: the v1 envelope (`version, type, payload, metadata`) plus
 * convenience fields read from the payload. It is the protocol's event union (AgentEventEnvelope), so
 * `switch (event.type)` types each payload by the registry's schema; `type` stays open: unknown types pass
 * through with their payload and metadata. The client's own `replay_gap` event has the control frame's
 * payload `{requested_after, first_available}` and empty metadata.
 */
export type AgentEvent = (AgentEventEnvelope | ReplayGapEvent) & AgentEventFields;

type Projected = Omit<AgentEventFields, 'payloadJson' | 'metadataJson'>;

/** Convenience fields of one event type (the seed's projection table, SEED-REFERENCE §1.2). */
function project(event: AgentEventEnvelope | ReplayGapEvent): Projected {
  switch (event.type) {
    case 'agent_start':
    case 'planning_start':
      return { prompt: event.payload.prompt };
    case 'turn_start':
      return { turn: event.payload.turn };
    case 'text_delta':
    case 'reasoning_delta':
      return { text: event.payload.text };
    case 'tool_start':
    case 'tool_execution_start':
      return { toolId: event.payload.id, toolName: event.payload.name };
    case 'tool_input_delta':
      return { toolId: event.payload.id, text: event.payload.delta };
    case 'tool_request_bound':
      return { toolId: event.payload.tool_id, toolName: event.payload.tool_name };
    case 'tool_end': {
      const p = event.payload;
      return {
        toolId: p.id,
        toolName: p.name,
        toolOutput: p.output,
        exitCode: p.exit_code,
        ...(p.error_kind !== undefined ? { errorKindJson: JSON.stringify(p.error_kind) } : {}),
      };
    }
    case 'tool_output_delta':
      return { toolId: event.payload.id, toolName: event.payload.name, text: event.payload.delta };
    case 'turn_end':
      return { turn: event.payload.turn, totalTokens: event.payload.usage.total_tokens };
    case 'agent_end': {
      const p = event.payload;
      return {
        text: p.text,
        totalTokens: p.usage.total_tokens,
        verificationSummaryJson: JSON.stringify(p.verification_summary),
        ...(p.verification_summary_text !== null ? { verificationSummaryText: p.verification_summary_text } : {}),
      };
    }
    case 'error':
      return { error: event.payload.message };
    case 'confirmation_required':
    case 'permission_denied':
    case 'hook_blocked':
      return { toolId: event.payload.tool_id, toolName: event.payload.tool_name };
    case 'confirmation_received':
    case 'confirmation_timeout':
      return { toolId: event.payload.tool_id };
    case 'subagent_start': {
      const p = event.payload;
      return { toolId: p.task_id, toolName: p.agent, text: p.session_id, prompt: p.description };
    }
    case 'subagent_progress':
      return { toolId: event.payload.task_id, text: `${event.payload.session_id}: ${event.payload.status}` };
    case 'subagent_end': {
      const p = event.payload;
      return {
        toolId: p.task_id,
        toolName: p.agent,
        text: p.output,
        toolOutput: p.output,
        exitCode: p.success ? 0 : 1,
      };
    }
    default:
      return {};
  }
}

/** What toAgentEvent reads: a wire envelope (its version is 1), or the replay_gap control frame (no metadata). */
export interface AgentEventInput {
  type: string;
  payload: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

/** The envelope or replay gap, checked against the documented shapes (a ProtocolError naming the field otherwise). */
function read(input: AgentEventInput): AgentEventEnvelope | ReplayGapEvent {
  const payload = input.payload;
  const metadata = input.metadata ?? {};
  if (input.type === 'replay_gap' && metadata.session_sequence === undefined) {
    const gap = payload as Partial<ReplayGap>;
    if (!Number.isInteger(gap.requested_after) || !Number.isInteger(gap.first_available))
      throw toA3sError(
        'PROTOCOL_ERROR',
        'the replay_gap frame is not the documented shape: payload needs integer requested_after and first_available',
        0,
        { type: 'replay_gap', field: 'payload' },
      );
    return { version: 1, type: 'replay_gap', payload: gap as ReplayGap, metadata: {} };
  }
  const read = readAgentEventEnvelope({ version: 1, type: input.type, payload, metadata });
  if (!read.ok)
    throw toA3sError(
      'PROTOCOL_ERROR',
      `the ${read.type || 'untyped'} event is not the documented shape: ${read.field || 'envelope'}: ${read.message}`,
      0,
      { type: read.type, field: read.field },
    );
  return read.event;
}

/**
 * Project a wire envelope (or the replay_gap control frame) onto an AgentEvent; unknown types keep payload and
 * metadata. A registered type whose payload is not its registry schema's throws a ProtocolError naming the field.
 */
export function toAgentEvent(input: AgentEventInput): AgentEvent {
  const envelope = read(input);
  const event = {
    ...envelope,
    payloadJson: JSON.stringify(envelope.payload),
    metadataJson: JSON.stringify(envelope.metadata),
  } as AgentEvent;
  for (const [key, value] of Object.entries(project(envelope)))
    if (value !== undefined) (event as unknown as Record<string, unknown>)[key] = value;
  return event;
}

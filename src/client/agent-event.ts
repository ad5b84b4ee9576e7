import type { EventEnvelope, EventMetadata } from '../protocol/event-envelope.js';

/**
 * An event as the seed's Node SDK gives it: the v1 envelope (`version, type, payload, metadata`) plus
 * convenience fields read from the payload (undefined when the event has no such field). `type` stays
 * open: unknown types pass through with their payload and metadata. The client's own `replay_gap`
 * event (retention dropped events the stream could not deliver) has the control frame's payload
 * `{requested_after, first_available}` and empty metadata.
 */
export interface AgentEvent {
  version: 1;
  type: string;
  payload: Record<string, unknown>;
  metadata: EventMetadata | Record<string, never>;
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

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

function usageTotal(value: unknown): number | undefined {
  return typeof value === 'object' && value !== null ? num((value as Record<string, unknown>).total_tokens) : undefined;
}

/** Convenience fields of one event type (the seed's projection table, SEED-REFERENCE §1.2). */
function project(type: string, p: Record<string, unknown>): Partial<AgentEvent> {
  switch (type) {
    case 'agent_start':
    case 'planning_start':
      return { prompt: str(p.prompt) };
    case 'turn_start':
      return { turn: num(p.turn) };
    case 'text_delta':
    case 'reasoning_delta':
      return { text: str(p.text) };
    case 'tool_start':
    case 'tool_execution_start':
      return { toolId: str(p.id), toolName: str(p.name) };
    case 'tool_input_delta':
      return { toolId: str(p.id), text: str(p.delta) };
    case 'tool_request_bound':
      return { toolId: str(p.tool_id), toolName: str(p.tool_name) };
    case 'tool_end':
      return {
        toolId: str(p.id),
        toolName: str(p.name),
        toolOutput: str(p.output),
        exitCode: num(p.exit_code),
        ...(p.error_kind !== undefined ? { errorKindJson: JSON.stringify(p.error_kind) } : {}),
      };
    case 'tool_output_delta':
      return { toolId: str(p.id), toolName: str(p.name), text: str(p.delta) };
    case 'turn_end':
      return { turn: num(p.turn), totalTokens: usageTotal(p.usage) };
    case 'agent_end': {
      const summary = p.verification_summary;
      return {
        text: str(p.text),
        totalTokens: usageTotal(p.usage),
        ...(summary !== undefined ? { verificationSummaryJson: JSON.stringify(summary) } : {}),
        ...(typeof p.verification_summary_text === 'string' ? { verificationSummaryText: p.verification_summary_text } : {}),
      };
    }
    case 'error':
      return { error: str(p.message) };
    case 'confirmation_required':
    case 'permission_denied':
    case 'hook_blocked':
      return { toolId: str(p.tool_id), toolName: str(p.tool_name) };
    case 'confirmation_received':
    case 'confirmation_timeout':
      return { toolId: str(p.tool_id) };
    case 'subagent_start':
      return { toolId: str(p.task_id), toolName: str(p.agent), text: str(p.session_id), prompt: str(p.description) };
    case 'subagent_progress':
      return { toolId: str(p.task_id), text: `${String(p.session_id)}: ${String(p.status)}` };
    case 'subagent_end':
      return { toolId: str(p.task_id), toolName: str(p.agent), text: str(p.output), toolOutput: str(p.output), exitCode: p.success === true ? 0 : 1 };
    default:
      return {};
  }
}

/** Project a wire envelope (or control frame) onto an AgentEvent; unknown types keep payload and metadata. */
export function toAgentEvent(envelope: Pick<EventEnvelope, 'type' | 'payload'> & { metadata?: EventEnvelope['metadata'] | Record<string, never> }): AgentEvent {
  const payload = envelope.payload ?? {};
  const metadata = envelope.metadata ?? {};
  const fields = project(envelope.type, payload);
  const event: AgentEvent = { version: 1, type: envelope.type, payload, metadata, payloadJson: JSON.stringify(payload), metadataJson: JSON.stringify(metadata) };
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) (event as unknown as Record<string, unknown>)[key] = value;
  return event;
}

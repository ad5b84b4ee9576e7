/**
 * The v1 event catalog: every canonical wire name, in one place. The TypeScript union of event types
 * and the runtime payload map both derive from it; see runtime-event.ts for the compile-time check.
 */
export const EVENT_TYPES = [
  'agent_start',
  'turn_start',
  'text_delta',
  'reasoning_delta',
  'tool_start',
  'tool_input_delta',
  'tool_execution_start',
  'tool_output_delta',
  'tool_end',
  'turn_end',
  'agent_end',
  'error',
  'run_status_changed',
  'continuation_injected',
  'context_compacted',
  'persistence_failed',
  'session_saved',
  'checkpoint_saved',
  'run_resumed',
  'confirmation_required',
  'confirmation_received',
  'confirmation_timeout',
  'permission_denied',
  'hook_executed',
  'hook_blocked',
  'budget_warning',
  'budget_exhausted',
  'provider_retry',
  'circuit_breaker_open',
  'planning_start',
  'planning_end',
  'step_start',
  'step_end',
  'task_updated',
  'subagent_start',
  'subagent_progress',
  'subagent_end',
  'verification_started',
  'verification_completed',
  'skill_activated',
  'skill_deactivated',
  'memory_stored',
  'memory_recalled',
  'mcp_server_connected',
  'mcp_server_disconnected',
  'mcp_tools_changed',
  'queue_updated',
  'command_executed',
  'session_closed',
  'budget_threshold_hit',
  'passivation_requested',
  'peer_invocation',
] as const;

/** A canonical v1 event type (wire name). */
export type EventType = (typeof EVENT_TYPES)[number];

const EVENT_TYPE_SET: ReadonlySet<string> = new Set(EVENT_TYPES);

/** True when a string is one of the canonical v1 event types. */
export function isCanonicalEventType(type: string): type is EventType {
  return EVENT_TYPE_SET.has(type);
}

import type { RunErrorCode } from '../errors.js';
import type { EventType } from './event-catalog.js';

/** Token usage as carried in event payloads (snake_case wire names). */
export interface UsagePayload {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/**
 * Payloads of the events the runtime emits today, keyed by wire name. Every key must be a
 * catalog entry: the assertion below fails `tsc` when a runtime event has no wire name.
 */
export interface RuntimeEventPayloads {
  agent_start: { input: string; model: string; side_question: boolean };
  turn_start: { turn: number };
  text_delta: { text: string };
  reasoning_delta: { text: string };
  tool_start: { tool_id: string; tool_name: string };
  tool_input_delta: { tool_id: string; delta: string };
  tool_execution_start: { tool_id: string; tool_name: string; args: unknown; origin?: string; parent_tool_id?: string };
  tool_output_delta: { tool_id: string; tool_name: string; delta: string };
  tool_end: { tool_id: string; tool_name: string; output: string; exit_code: number; duration_ms: number; truncated: boolean; artifact_id?: string };
  turn_end: { turn: number; usage: UsagePayload; finish_reason: string };
  agent_end: AgentEndPayload;
  error: { code: RunErrorCode; message: string };
  run_status_changed: { from: string; to: string };
  continuation_injected: { turn: number; continuation: number };
  context_compacted: { before_messages: number; after_messages: number };
  persistence_failed: { code: string; message: string };
  session_saved: { generation: number };
  session_closed: { reason: string };
  permission_denied: { tool_id: string; tool_name: string; rule: string; reason: string };
  confirmation_required: { tool_id: string; tool_name: string; args: unknown; timeout_ms: number; args_digest: string; rule: string };
  confirmation_received: { tool_id: string; tool_name: string; approved: boolean; reason: string | null };
  confirmation_timeout: { tool_id: string; tool_name: string; action_taken: 'reject' | 'auto_approve' };
  hook_blocked: { tool_id: string; tool_name: string; hook_id: string | null; reason: string };
  budget_threshold_hit: BudgetEventPayload & { kind: 'soft' };
  budget_exhausted: BudgetEventPayload;
  checkpoint_saved: { turn: number; store: string };
  run_resumed: { from_run_id: string; turn: number };
  mcp_server_connected: { server: string };
  mcp_server_disconnected: { server: string; reason: string | null };
  mcp_tools_changed: { server: string; reason: string; tools: string[] };
  passivation_requested: { reason: string; deadline_ms: number };
  peer_invocation: { from_session_id: string; from_tenant_id: string; correlation_id: string };
  verification_started: { subject: string; commands: number };
  verification_completed: { report_id: string; subject: string; status: string; failed_required: number };
}

/** Payload fields shared by the budget events (a type alias, not an interface, so payloads fit the event log's `Record<string, unknown>`). */
export type BudgetEventPayload = {
  resource: string;
  reason: string;
  used: number | null;
  limit: number | null;
  scope: string;
  tool_id?: string;
  tool_name?: string;
};

/** agent_end payload: the AgentResult in wire form (a type alias, not an interface, so payloads fit the event log's `Record<string, unknown>`). */
export type AgentEndPayload = {
  status: string;
  text: string;
  tool_calls_count: number;
  usage: UsagePayload;
  verification_status: string;
  pending_verification_count: number;
  failed_verification_count: number;
  verification_report_count: number;
  verification_summary_text: string | null;
  error?: { code: string; message: string };
};

type MissingWireNames = Exclude<keyof RuntimeEventPayloads, EventType>;
/** Compile-time guard: resolves to `true` only when every runtime event has a catalog wire name. */
type AssertAllNamed<T extends never> = T;
export type RuntimeEventsAreNamed = AssertAllNamed<MissingWireNames>;

/** A runtime event type: one the runtime emits with a typed payload. */
export type RuntimeEventType = keyof RuntimeEventPayloads;

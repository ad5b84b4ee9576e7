import { EXTENSION_EVENT_PAYLOADS } from './extension-event-payloads.js';

/**
 * The event catalog: every wire name, in one place. The seed's 52 v1 types come first, in the seed's
 * order (`agentEventTypesV1()`); the server's own extension types follow, named by their payload schemas.
 * The payload registry (event-registry.ts) has one zod schema per name; `tsc` fails when one is missing.
 */
export const SEED_EVENT_TYPES = [
  'agent_start',
  'agent_mode_changed',
  'turn_start',
  'text_delta',
  'reasoning_delta',
  'tool_start',
  'tool_input_delta',
  'tool_request_bound',
  'tool_execution_start',
  'tool_end',
  'tool_output_delta',
  'turn_end',
  'agent_end',
  'error',
  'confirmation_required',
  'confirmation_received',
  'confirmation_timeout',
  'user_question',
  'external_task_pending',
  'external_task_completed',
  'permission_denied',
  'context_resolving',
  'context_resolved',
  'run_capability_bound',
  'model_presentation_bound',
  'model_input_bound',
  'model_usage_bound',
  'cognitive_context_bound',
  'command_dead_lettered',
  'command_retry',
  'queue_alert',
  'task_updated',
  'memory_stored',
  'memory_recalled',
  'memories_searched',
  'memory_cleared',
  'subagent_start',
  'subagent_progress',
  'subagent_end',
  'planning_start',
  'planning_end',
  'step_start',
  'step_end',
  'goal_extracted',
  'goal_progress',
  'goal_achieved',
  'context_compacted',
  'run_control_applied',
  'persistence_failed',
  'budget_threshold_hit',
  'passivation_requested',
  'peer_invocation',
] as const;

/**
 * The server's own event types (not in the seed's catalog): run lifecycle, persistence, hooks, budgets,
 * MCP servers and verification. Consumers that only know the seed's catalog keep them as unknown types.
 * They are the keys of EXTENSION_EVENT_PAYLOADS, in its order: a new extension event is its schema there
 * (and its emit site), nothing else.
 */
export const EXTENSION_EVENT_TYPES = Object.freeze(
  Object.keys(EXTENSION_EVENT_PAYLOADS),
) as readonly ExtensionEventType[];

/** A seed (v1 catalog) event type. */
export type SeedEventType = (typeof SEED_EVENT_TYPES)[number];
/** One of the server's extension event types. */
export type ExtensionEventType = keyof typeof EXTENSION_EVENT_PAYLOADS;
/** Every event type the server knows: the seed's catalog, then the extensions. */
export type EventType = SeedEventType | ExtensionEventType;

/** Every known event type, seed catalog first. */
export const EVENT_TYPES: readonly EventType[] = [...SEED_EVENT_TYPES, ...EXTENSION_EVENT_TYPES];

const SEED_TYPE_SET: ReadonlySet<string> = new Set(SEED_EVENT_TYPES);
const EVENT_TYPE_SET: ReadonlySet<string> = new Set(EVENT_TYPES);

/** The seed's `agentEventTypesV1()`: its 52 wire names in its order (a fresh copy). */
export function agentEventTypesV1(): SeedEventType[] {
  return [...SEED_EVENT_TYPES];
}

/** The seed's `eventEnvelopeV1Version()`. */
export function eventEnvelopeV1Version(): 1 {
  return 1;
}

/** True when a string is one of the seed's 52 v1 catalog types. */
export function isCanonicalEventType(type: string): type is SeedEventType {
  return SEED_TYPE_SET.has(type);
}

/** True when a string is any event type the server knows (seed or extension). */
export function isKnownEventType(type: string): type is EventType {
  return EVENT_TYPE_SET.has(type);
}

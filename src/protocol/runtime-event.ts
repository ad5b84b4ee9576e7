import type { EventType } from './event-catalog.js';
import type { RuntimeEventPayloads } from './event-registry.js';

export type { RuntimeEventPayloads } from './event-registry.js';

/** Token usage as carried in event payloads (snake_case wire names). */
export type UsagePayload = RuntimeEventPayloads['turn_end']['usage'];

/** Payload fields shared by the budget events. */
export type BudgetEventPayload = RuntimeEventPayloads['budget_exhausted'];

/** agent_end payload: the AgentResult in wire form. */
export type AgentEndPayload = RuntimeEventPayloads['agent_end'];

/** A runtime event type: one the runtime emits with a typed payload. */
export type RuntimeEventType = EventType;

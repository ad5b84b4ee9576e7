import { describe, expect, it } from 'vitest';
import { EVENT_TYPES, isCanonicalEventType, type EventType } from '../../src/protocol/event-catalog.js';
import { EventEnvelopeSchema } from '../../src/protocol/event-envelope.js';
import type { RuntimeEventPayloads } from '../../src/protocol/runtime-event.js';

// Compile-time checks (vitest type-checks nothing, but `npm run typecheck` does): a runtime event needs a wire name.
type MissingWireName<T> = Exclude<keyof T, EventType>;
const everyRuntimeEventIsNamed: MissingWireName<RuntimeEventPayloads> extends never ? true : false = true;
// @ts-expect-error a payload map with an event that has no wire name does not pass the check
const unnamedEventFails: MissingWireName<RuntimeEventPayloads & { not_in_the_catalog: object }> extends never ? true : false = true;

describe('the v1 event catalog', () => {
  it('has the 52 canonical snake_case types, from agent_start to peer_invocation, without duplicates', () => {
    expect(EVENT_TYPES).toHaveLength(52);
    expect(new Set(EVENT_TYPES).size).toBe(52);
    expect(EVENT_TYPES[0]).toBe('agent_start');
    expect(EVENT_TYPES.at(-1)).toBe('peer_invocation');
    for (const type of EVENT_TYPES) expect(type).toMatch(/^[a-z]+(_[a-z]+)*$/);
    expect(isCanonicalEventType('tool_end')).toBe(true);
    expect(isCanonicalEventType('made_up')).toBe(false);
    expect(everyRuntimeEventIsNamed && unnamedEventFails).toBe(true);
  });

  it('parsers keep unknown event types with their payload and metadata intact', () => {
    const frame = { version: 1, type: 'future_event_v2', payload: { nested: { a: [1, 2] } }, metadata: { session_id: 's', session_sequence: 3, timestamp_ms: 1, extra_field: 'kept' } };
    const parsed = EventEnvelopeSchema.parse(frame);
    expect(parsed).toEqual(frame);
  });
});

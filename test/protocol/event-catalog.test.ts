import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  EVENT_TYPES,
  EXTENSION_EVENT_TYPES,
  SEED_EVENT_TYPES,
  agentEventTypesV1,
  eventEnvelopeV1Version,
  isCanonicalEventType,
  isKnownEventType,
  type EventType,
} from '../../src/protocol/event-catalog.js';
import { EventEnvelopeSchema } from '../../src/protocol/event-envelope.js';
import { EVENT_PAYLOAD_SCHEMAS, type RuntimeEventPayloads } from '../../src/protocol/event-registry.js';
import { withEventTable } from '../../src/server/render-event-table.js';

// Compile-time checks (vitest type-checks nothing, but `npm run typecheck` does): every type has a payload.
type MissingPayload<T> = Exclude<EventType, keyof T>;
const everyTypeHasAPayload: MissingPayload<RuntimeEventPayloads> extends never ? true : false = true;
// @ts-expect-error a payload map without tool_end does not pass the check
const missingFails: MissingPayload<Omit<RuntimeEventPayloads, 'tool_end'>> extends never ? true : false = true;

/** The seed's catalog, in the order of its Rust macro (SEED-REFERENCE §1.2), written out independently of src. */
const SEED_ORDER = `agent_start agent_mode_changed turn_start text_delta reasoning_delta tool_start tool_input_delta
tool_request_bound tool_execution_start tool_end tool_output_delta turn_end agent_end error confirmation_required
confirmation_received confirmation_timeout user_question external_task_pending external_task_completed permission_denied
context_resolving context_resolved run_capability_bound model_presentation_bound model_input_bound model_usage_bound
cognitive_context_bound command_dead_lettered command_retry queue_alert task_updated memory_stored memory_recalled
memories_searched memory_cleared subagent_start subagent_progress subagent_end planning_start planning_end step_start
step_end goal_extracted goal_progress goal_achieved context_compacted run_control_applied persistence_failed
budget_threshold_hit passivation_requested peer_invocation`.split(/\s+/);

describe('the event catalog', () => {
  it("agentEventTypesV1() is the seed's 52 wire names in the seed's order", () => {
    expect(SEED_ORDER).toHaveLength(52);
    expect(agentEventTypesV1()).toEqual(SEED_ORDER);
    expect(SEED_EVENT_TYPES).toEqual(SEED_ORDER);
    expect(eventEnvelopeV1Version()).toBe(1);
    // A fresh copy: callers cannot reorder the catalog.
    agentEventTypesV1().reverse();
    expect(agentEventTypesV1()[0]).toBe('agent_start');
    expect(everyTypeHasAPayload && missingFails).toBe(true);
  });

  it('extension types are a second list: snake_case, disjoint from the seed catalog, after it', () => {
    for (const type of EXTENSION_EVENT_TYPES) {
      expect(type).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(isCanonicalEventType(type), type).toBe(false);
      expect(isKnownEventType(type)).toBe(true);
    }
    expect(EVENT_TYPES).toEqual([...SEED_ORDER, ...EXTENSION_EVENT_TYPES]);
    expect(new Set(EVENT_TYPES).size).toBe(EVENT_TYPES.length);
    expect(isCanonicalEventType('tool_end')).toBe(true);
    expect(isKnownEventType('made_up')).toBe(false);
  });

  it('the registry has exactly one payload schema per type, each documented in OpenAPI as an object', () => {
    expect(Object.keys(EVENT_PAYLOAD_SCHEMAS).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const json = z.toJSONSchema(EVENT_PAYLOAD_SCHEMAS[type], { unrepresentable: 'any', io: 'output' }) as {
        type?: string;
      };
      expect(json.type, type).toBe('object');
    }
  });

  it("docs/events.md's event table is the registry's (regenerate with `npm run openapi`)", () => {
    const readme = readFileSync(new URL('../../docs/events.md', import.meta.url), 'utf8');
    expect(withEventTable(readme) === readme, 'docs/events.md event table is stale: run `npm run openapi`').toBe(true);
    for (const type of EVENT_TYPES) expect(readme).toContain(`| \`${type}\` |`);
  });

  it('parsers keep unknown event types with their payload and metadata intact', () => {
    const frame = {
      version: 1,
      type: 'future_event_v2',
      payload: { nested: { a: [1, 2] } },
      metadata: { session_id: 's', session_sequence: 3, timestamp_ms: 1, extra_field: 'kept' },
    };
    const parsed = EventEnvelopeSchema.parse(frame);
    expect(parsed).toEqual(frame);
  });
});

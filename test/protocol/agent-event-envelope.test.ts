import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import {
  readAgentEventEnvelope,
  type AgentEventEnvelope,
  type KnownEvent,
  type UnknownEvent,
} from '../../src/protocol/agent-event-envelope.js';
import type { EventType } from '../../src/protocol/event-catalog.js';
import { EVENT_PAYLOAD_SCHEMAS } from '../../src/protocol/event-registry.js';

const metadata = { run_id: 'r1', session_id: 's1', session_sequence: 7, timestamp_ms: 1000 };
const toolEnd = { id: 'c1', name: 'bash', output: 'ok', exit_code: 0, duration_ms: 3, truncated: false };

/** The payload type a reader gets in `case T:` of a switch on the union. */
function payloadIn<T extends EventType>(event: AgentEventEnvelope, type: T): KnownEvent<T>['payload'] | undefined {
  return event.type === type ? (event as KnownEvent<T>).payload : undefined;
}

describe('AgentEventEnvelope: the event union readers switch on', () => {
  it('is derived from the registry: each case is its schema payload, unknown types stay open (checked by tsc)', () => {
    expectTypeOf<KnownEvent<'tool_end'>['payload']>().toEqualTypeOf<
      z.infer<(typeof EVENT_PAYLOAD_SCHEMAS)['tool_end']>
    >();
    expectTypeOf<KnownEvent['type']>().toEqualTypeOf<EventType>();
    expectTypeOf<UnknownEvent['payload']>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<AgentEventEnvelope['type']>().toExtend<string>();
    const read = readAgentEventEnvelope({ version: 1, type: 'tool_end', payload: toolEnd, metadata });
    if (!read.ok) throw new Error(read.message);
    const event = read.event;
    switch (event.type) {
      case 'tool_end':
        expectTypeOf(event.payload.exit_code).toEqualTypeOf<number>();
        // @ts-expect-error tool_end has no tool_id: a field the schema does not name fails tsc
        expect(event.payload.tool_id).toBeUndefined();
        expect(event.payload.exit_code).toBe(0);
        break;
      case 'confirmation_required':
        expectTypeOf(event.payload.tool_id).toEqualTypeOf<string>();
        throw new Error('not this case');
      default:
        expectTypeOf(event.type).toExtend<string>();
        throw new Error(`the tool_end event fell through as ${event.type}`);
    }
    expect(payloadIn(event, 'tool_end')).toBe(toolEnd);
  });

  it('reads a registered event: its payload object is kept as received, fields the schema does not name included', () => {
    const payload = { ...toolEnd, extra_field: 'kept' };
    const read = readAgentEventEnvelope({
      version: 1,
      type: 'tool_end',
      payload,
      metadata: { ...metadata, node: 'n1' },
    });
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.event.payload).toBe(payload);
    expect(read.event.metadata).toMatchObject({ node: 'n1', session_sequence: 7 });
  });

  it('names the field of a registered payload that is not its schema', () => {
    expect(
      readAgentEventEnvelope({ version: 1, type: 'tool_end', payload: { ...toolEnd, exit_code: '0' }, metadata }),
    ).toMatchObject({ ok: false, type: 'tool_end', field: 'payload.exit_code' });
    expect(readAgentEventEnvelope({ version: 1, type: 'agent_end', payload: { text: 'x' }, metadata })).toMatchObject({
      ok: false,
      type: 'agent_end',
      field: expect.stringMatching(/^payload\./),
    });
    expect(
      readAgentEventEnvelope({
        version: 1,
        type: 'tool_start',
        payload: { id: 'c1', name: 'bash' },
        metadata: { session_id: 's1' },
      }),
    ).toMatchObject({ ok: false, field: 'metadata.session_sequence' });
    expect(
      readAgentEventEnvelope({ version: 2, type: 'tool_start', payload: { id: 'c1', name: 'bash' }, metadata }),
    ).toMatchObject({ ok: false, field: 'version' });
    expect(readAgentEventEnvelope('not an envelope')).toMatchObject({ ok: false, type: '' });
  });

  it('passes an unknown type through with its payload and metadata', () => {
    const payload = { anything: [1, 2] };
    const read = readAgentEventEnvelope({ version: 1, type: 'from_the_future', payload, metadata });
    expect(read).toMatchObject({ ok: true, event: { type: 'from_the_future', metadata } });
    if (read.ok) expect(read.event.payload).toBe(payload);
  });

  it('every registry payload reads as it is written (no defaults or transforms), so keeping the received object is sound', () => {
    type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
    type Registry = typeof EVENT_PAYLOAD_SCHEMAS;
    type Changed = {
      [K in EventType]: Same<z.input<Registry[K]>, z.output<Registry[K]>> extends true ? never : K;
    }[EventType];
    expectTypeOf<Changed>().toEqualTypeOf<never>();
    // At run time too: a default makes a field required only in the output schema, a transform makes the output `{}`
    // (additionalProperties differs by mode alone: output schemas close objects).
    const shape = (io: 'input' | 'output', type: EventType) =>
      JSON.stringify(EVENT_PAYLOAD_SCHEMAS[type].toJSONSchema({ unrepresentable: 'any', io }), (key, value: unknown) =>
        key === 'additionalProperties' ? undefined : value,
      );
    for (const type of Object.keys(EVENT_PAYLOAD_SCHEMAS) as EventType[])
      expect(shape('input', type), type).toBe(shape('output', type));
  });
});

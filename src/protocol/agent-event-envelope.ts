import type { z } from 'zod';
import { isKnownEventType, type EventType } from './event-catalog.js';
import { EventEnvelopeSchema, type EventEnvelope, type EventMetadata } from './event-envelope.js';
import { EVENT_PAYLOAD_SCHEMAS, type RuntimeEventPayloads } from './event-registry.js';

/**
 * A registered event as a reader sees it: the envelope with the payload its registry schema gives
 * (`KnownEvent<'tool_end'>`; `KnownEvent` alone is the union of every registered type).
 */
export type KnownEvent<T extends EventType = EventType> = {
  [K in T]: { version: 1; type: K; payload: RuntimeEventPayloads[K]; metadata: EventMetadata };
}[T];

declare const unknownEventType: unique symbol;

/**
 * The `type` of an event this build does not know. At run time it is any string; for `tsc` it is a string
 * that equals no registered name, so `switch (event.type)` narrows a registered case to its KnownEvent
 * alone (the template literal makes it a discriminant; the brand keeps registered names out of it).
 */
// `${string}` would collapse to string and narrow nothing; `${any}` stays a template type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type UnknownEventType = `${any}` & { readonly [unknownEventType]: true };

/** An event of a type the registry does not name: it passes through with its payload and metadata. */
export interface UnknownEvent {
  version: 1;
  type: UnknownEventType;
  payload: Record<string, unknown>;
  metadata: EventMetadata;
}

/**
 * The one event union readers switch on: every registered type with its payload, and unknown types kept
 * open. Renaming a payload field in the registry fails `tsc` in every reader that reads it.
 */
export type AgentEventEnvelope = KnownEvent | UnknownEvent;

/** What reading an envelope off the wire gives: the event, or the field that is not the documented shape. */
export type AgentEventEnvelopeRead =
  { ok: true; event: AgentEventEnvelope } | { ok: false; type: string; field: string; message: string };

/**
 * An envelope the server itself produced, as the union: in-process readers (AG-UI, ACP) get their events
 * from the session's event log, whose payloads the registry typed where they were emitted.
 */
export function asAgentEventEnvelope(envelope: EventEnvelope): AgentEventEnvelope {
  return envelope as AgentEventEnvelope;
}

function fieldOf(prefix: string, path: readonly PropertyKey[]): string {
  return [prefix, ...path.map(String)].filter((part) => part !== '').join('.');
}

/**
 * Read an envelope off the wire: the EventEnvelopeV1 shape, then, for a registered type, its payload
 * against the registry's schema. The payload object is kept as received (fields the schema does not name
 * stay); an unknown type passes through as an UnknownEvent. A mismatch names the field (`payload.exit_code`).
 */
export function readAgentEventEnvelope(value: unknown): AgentEventEnvelopeRead {
  const envelope = EventEnvelopeSchema.safeParse(value);
  const type = typeof (value as { type?: unknown } | null)?.type === 'string' ? (value as { type: string }).type : '';
  if (!envelope.success) {
    const issue = envelope.error.issues[0];
    return {
      ok: false,
      type,
      field: fieldOf('', issue?.path ?? []),
      message: issue?.message ?? 'not an EventEnvelopeV1',
    };
  }
  const event = value as EventEnvelope;
  if (isKnownEventType(event.type)) {
    const payload = (EVENT_PAYLOAD_SCHEMAS[event.type] as z.ZodType).safeParse(event.payload);
    if (!payload.success) {
      const issue = payload.error.issues[0];
      return {
        ok: false,
        type,
        field: fieldOf('payload', issue?.path ?? []),
        message: issue?.message ?? 'not the registered payload',
      };
    }
  }
  return { ok: true, event: event as AgentEventEnvelope };
}

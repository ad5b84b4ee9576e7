import type { z } from 'zod';
import type { EventType } from './event-catalog.js';
import { EXTENSION_EVENT_PAYLOADS } from './extension-event-payloads.js';
import { SEED_EVENT_PAYLOADS } from './seed-event-payloads.js';

/**
 * The event registry: every event type's payload schema, keyed by wire name. `satisfies` makes `tsc` fail
 * when a catalog name has no schema or a schema has no catalog name.
 */
export const EVENT_PAYLOAD_SCHEMAS = { ...SEED_EVENT_PAYLOADS, ...EXTENSION_EVENT_PAYLOADS } satisfies Record<
  EventType,
  z.ZodType
>;

type Registry = typeof EVENT_PAYLOAD_SCHEMAS;
type MissingSchemas = Exclude<EventType, keyof Registry>;
type UnnamedSchemas = Exclude<keyof Registry, EventType>;
/** Compile-time guard: resolves to `true` only when names and schemas match one to one. */
type AssertNever<T extends never> = T;
export type EventRegistryIsComplete = AssertNever<MissingSchemas | UnnamedSchemas>;

/** The payload of each event type, as the runtime emits it (derived from the registry's schemas). */
export type RuntimeEventPayloads = { [K in EventType]: z.infer<Registry[K]> };

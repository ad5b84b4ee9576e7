import type { z } from 'zod';
import { isCanonicalEventType, SEED_EVENT_TYPES } from '../protocol/event-catalog.js';
import { EXTENSION_EVENT_PAYLOADS } from '../protocol/extension-event-payloads.js';
import { SEED_EVENT_PAYLOADS } from '../protocol/seed-event-payloads.js';
import { createBuiltinTools } from '../runtime/tools/builtin-tools.js';
import type { AnyToolDefinition } from '../runtime/tools/define-tool.js';

/** One event type as the generated docs list it: wire name, catalog and payload schema. */
export interface EventDoc {
  readonly type: string;
  readonly catalog: 'seed' | 'extension';
  readonly payload: z.ZodType;
}

/**
 * What the generated files (openapi.yaml's `x-event-types` and `x-builtin-tools`, README's event table) are
 * rendered from. The committed files use defaultDocRegistries(); a test passes registries with a fixture
 * tool and event added the way a newcomer adds them, and checks they appear.
 */
export interface DocRegistries {
  /** Every event type, in the order of the table: the seed's catalog, then the extensions. */
  readonly events: readonly EventDoc[];
  /** The built-in tools, as `GET /v1/sessions/:id/tools` lists them. */
  readonly tools: readonly AnyToolDefinition[];
}

/** The event docs of the seed's catalog (in its order) and of extension payload schemas keyed by wire name (in theirs). */
export function eventDocs(extensions: Readonly<Record<string, z.ZodType>> = EXTENSION_EVENT_PAYLOADS): EventDoc[] {
  const seed = SEED_EVENT_TYPES.map((type): EventDoc => ({
    type,
    catalog: 'seed',
    payload: SEED_EVENT_PAYLOADS[type],
  }));
  for (const type of Object.keys(extensions))
    if (isCanonicalEventType(type)) throw new Error(`extension event ${type} is a seed catalog name`);
  return [
    ...seed,
    ...Object.entries(extensions).map(([type, payload]): EventDoc => ({ type, catalog: 'extension', payload })),
  ];
}

/** The server's own registries: every event type and the built-in tools. */
export function defaultDocRegistries(): DocRegistries {
  return { events: eventDocs(), tools: createBuiltinTools() };
}

import { z } from 'zod';
import { EXTENSION_EVENT_PAYLOADS } from '../../src/protocol/extension-event-payloads.js';
import { eventDocs, type EventDoc } from '../../src/server/doc-registries.js';

/**
 * A fixture event written as an extension event is: one entry (wire name, doc comment, zod payload schema) of
 * the object in `src/protocol/extension-event-payloads.ts`; the other file is its emit site.
 */
export const FIXTURE_EVENT_PAYLOADS = {
  /** The fixture was pinged `count` times (a fixture of the test suite; never emitted). */
  fixture_pinged: z.object({ count: z.number().int().nonnegative(), note: z.string().optional() }),
};

/** Every event type with the fixture added after the extensions, as its entry at the end of EXTENSION_EVENT_PAYLOADS adds it. */
export function eventDocsWithFixture(): EventDoc[] {
  return eventDocs({ ...EXTENSION_EVENT_PAYLOADS, ...FIXTURE_EVENT_PAYLOADS });
}

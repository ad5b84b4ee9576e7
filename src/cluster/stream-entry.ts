import { CodeError } from '../errors.js';
import { formatZodIssues } from '../protocol/format-zod-issues.js';
import { EventEnvelopeSchema, type EventEnvelope } from '../protocol/event-envelope.js';

/**
 * Decode one entry of a session event stream (id `<session_sequence>-0`, fields `seq` and `e` = the
 * envelope's JSON) and validate it, throwing PERSISTENCE_FAILED that names the key and entry id when the
 * entry is not a valid EventEnvelopeV1 whose session_sequence matches its id.
 */
export function decodeStreamEntry(key: string, id: string, fields: readonly string[]): EventEnvelope {
  const where = `stream ${key} entry ${id}`;
  let json: string | undefined;
  for (let index = 0; index + 1 < fields.length; index += 2) {
    if (fields[index] === 'e') json = fields[index + 1];
  }
  if (json === undefined) throw invalid(where, 'has no "e" field', key, id);
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw invalid(where, 'holds malformed JSON', key, id);
  }
  const parsed = EventEnvelopeSchema.safeParse(raw);
  if (!parsed.success) {
    throw invalid(where, `is not an EventEnvelopeV1 (${formatZodIssues(parsed.error)})`, key, id);
  }
  if (`${parsed.data.metadata.session_sequence}-0` !== id) {
    throw invalid(where, `holds session_sequence ${parsed.data.metadata.session_sequence}, not its id's`, key, id);
  }
  return parsed.data;
}

/** The session_sequence an entry id `<n>-0` stands for. */
export function sequenceOfStreamId(id: string): number {
  return Number(id.slice(0, id.indexOf('-')));
}

function invalid(where: string, what: string, key: string, id: string): CodeError {
  return new CodeError('PERSISTENCE_FAILED', `${where} ${what}`, { key, entryId: id, reason: 'invalid_stream_entry' });
}

import { SessionSnapshotV1Schema, type SessionSnapshotV1 } from '../protocol/session-snapshot.js';
import { parseStoredDocument, type StoredDocumentKind } from './parse-stored-document.js';

/** The snapshot schema version this server reads and writes. */
export const SNAPSHOT_SCHEMA_VERSION = 1;

const SNAPSHOT: StoredDocumentKind<SessionSnapshotV1> = {
  name: 'snapshot',
  version: SNAPSHOT_SCHEMA_VERSION,
  schema: SessionSnapshotV1Schema,
};

/**
 * Validate untrusted snapshot data (parsed JSON or an in-memory value) and return a SessionSnapshotV1,
 * throwing CodeError('SNAPSHOT_INVALID') that names `source` for a future version, malformed fields or
 * prototype-polluting keys.
 */
export function parseSnapshot(raw: unknown, source: string): SessionSnapshotV1 {
  return parseStoredDocument(SNAPSHOT, raw, source);
}

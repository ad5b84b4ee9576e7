import { LoopCheckpointSchema, type LoopCheckpoint } from '../protocol/loop-checkpoint.js';
import { parseStoredDocument, type StoredDocumentKind } from './parse-stored-document.js';

/** The loop checkpoint schema version this server reads and writes. */
export const CHECKPOINT_SCHEMA_VERSION = 1;

const CHECKPOINT: StoredDocumentKind<LoopCheckpoint> = {
  name: 'checkpoint',
  version: CHECKPOINT_SCHEMA_VERSION,
  schema: LoopCheckpointSchema,
};

/**
 * Validate untrusted checkpoint data (parsed JSON or an in-memory value) and return a LoopCheckpoint,
 * throwing CodeError('SNAPSHOT_INVALID') that names `source` for another schema_version, malformed
 * fields or prototype-polluting keys.
 */
export function parseCheckpoint(raw: unknown, source: string): LoopCheckpoint {
  return parseStoredDocument(CHECKPOINT, raw, source);
}

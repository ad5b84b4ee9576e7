import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WORKSPACE_TOKEN } from './snapshot-fixture-generator.js';

/** The folder of frozen SessionSnapshotV1 fixtures (saved by real servers; never edited or regenerated). */
export const FROZEN_SNAPSHOTS = join(import.meta.dirname, '..', 'fixtures', 'snapshots');

/**
 * A frozen fixture (`<folder>/<tenant>/<id>.json`, e.g. `v1-2026-12-02/default/plain-tool-run.json`) as the
 * raw JSON a store reads, its workspace placeholder replaced by `workspace`: what an earlier version wrote,
 * never a snapshot built by today's code.
 */
export function readFrozenSnapshot(
  file: string,
  workspace = '/workspaces/compat',
): Record<string, unknown> & { session: Record<string, unknown>; run_records: Array<Record<string, unknown>> } {
  return JSON.parse(
    readFileSync(join(FROZEN_SNAPSHOTS, file), 'utf8').split(WORKSPACE_TOKEN).join(workspace),
  ) as ReturnType<typeof readFrozenSnapshot>;
}

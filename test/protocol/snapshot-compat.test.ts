import { describe, expect, it } from 'vitest';
import { parseSnapshot } from '../../src/stores/parse-snapshot.js';
import { readFrozenSnapshot } from '../support/frozen-snapshots.js';

// Each case starts from a snapshot an earlier server wrote (test/fixtures/snapshots, frozen), never from one
// today's code builds: a snapshot built now has today's shape and would prove nothing about old files.
const V1_PLAIN = 'v1-2026-12-02/default/plain-tool-run.json';

describe('snapshots stored by earlier versions stay loadable', () => {
  it('reads a run error code outside the run error catalogue as INTERNAL_ERROR, keeping its message', () => {
    const stored = readFrozenSnapshot(V1_PLAIN);
    // An earlier version could store an errno code as a run's error (the run records of the frozen file, one changed).
    stored.run_records[0] = {
      ...stored.run_records[0],
      status: 'failed',
      error: { code: 'ECONNRESET', message: 'socket hang up' },
    };
    const parsed = parseSnapshot(stored, V1_PLAIN);
    expect(parsed.run_records[0]?.error).toEqual({ code: 'INTERNAL_ERROR', message: 'socket hang up' });
  });

  it('loads a frozen snapshot without the fields added since it was written (workspacePin, permissionGrants, ownMcpServers)', () => {
    const stored = readFrozenSnapshot(V1_PLAIN);
    expect(Object.keys(stored.session)).not.toEqual(expect.arrayContaining(['workspacePin']));
    const parsed = parseSnapshot(stored, V1_PLAIN);
    expect(parsed.session.id).toBe('plain-tool-run');
    expect(parsed.session.policyBounded).toBe(false);
    expect(parsed.session.workspacePin).toBeUndefined();
    expect(parsed.session.permissionGrants).toBeUndefined();
    expect(parsed.session.ownMcpServers).toBeUndefined();
    expect(parsed.run_records.map((r) => [r.status, r.error])).toEqual([['completed', undefined]]);
  });
});

import { describe, expect, it } from 'vitest';
import { parseSnapshot } from '../../src/stores/parse-snapshot.js';
import { makeSnapshot } from '../support/snapshot-fixtures.js';

describe('snapshots stored by earlier versions stay loadable', () => {
  it('reads a run error code outside the run error catalogue as INTERNAL_ERROR, keeping its message', () => {
    const stored = JSON.parse(JSON.stringify(makeSnapshot('old', 3))) as Record<string, unknown> & { run_records: Array<Record<string, unknown>> };
    stored.run_records[0] = { ...stored.run_records[0], status: 'failed', error: { code: 'ECONNRESET', message: 'socket hang up' } };
    const parsed = parseSnapshot(stored, 'a file written by 0.1');
    expect(parsed.run_records[0]?.error).toEqual({ code: 'INTERNAL_ERROR', message: 'socket hang up' });
  });

  it('loads a snapshot without the fields added since (policyBounded, ownMcpServers)', () => {
    const parsed = parseSnapshot(JSON.parse(JSON.stringify(makeSnapshot('plain', 1))), 'a file written by 0.1');
    expect(parsed.session.policyBounded).toBeUndefined();
    expect(parsed.session.ownMcpServers).toBeUndefined();
  });
});

import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { startFakeProvider } from '../support/fake-provider.js';
import { startTestServer, tempDir } from '../support/test-server.js';

describe('change capture config', () => {
  it('limits.change_capture_exclude and change_store_bytes load from HCL, with their defaults', async () => {
    const loaded = await loadConfig({
      env: {},
      cwd: '/tmp',
      configText: 'limits {\n  change_capture_exclude = ["dist/", "*.log"]\n  change_store_bytes = 2097152\n}\n',
    });
    expect(loaded.limits.changeCaptureExclude).toEqual(['dist/', '*.log']);
    expect(loaded.limits.changeStoreBytes).toBe(2_097_152);
    const defaults = await loadConfig({ env: {}, cwd: '/tmp', configText: 'limits {}\n' });
    expect(defaults.limits.changeCaptureExclude).toEqual(['.git/', 'node_modules/']);
    expect(defaults.limits.changeStoreBytes).toBe(536_870_912);
  });

  it('a change store bound under 1 MiB is refused at startup naming the key', async () => {
    await expect(
      loadConfig({ env: {}, cwd: '/tmp', configText: 'limits {\n  change_store_bytes = 10\n}\n' }),
    ).rejects.toThrow(/change_store_bytes|changeStoreBytes/);
  });

  it('changes_dir loads from HCL and A3S_CHANGES_DIR (resolved against cwd); absent, none is set', async () => {
    const fromText = await loadConfig({ env: {}, cwd: '/srv', configText: 'changes_dir = "shared/changes"\n' });
    expect(fromText.changesDir).toBe('/srv/shared/changes');
    const fromEnv = await loadConfig({ env: { A3S_CHANGES_DIR: '/mnt/changes' }, cwd: '/tmp', configText: '' });
    expect(fromEnv.changesDir).toBe('/mnt/changes');
    expect((await loadConfig({ env: {}, cwd: '/tmp', configText: '' })).changesDir).toBeUndefined();
  });

  it('a changes_dir inside a workspace root, or holding one, fails startup naming it; a separate one holds the stores', async () => {
    const fake = await startFakeProvider();
    try {
      const root = tempDir('a3s-ws-');
      for (const changesDir of [join(root, 'stores'), root]) {
        await expect(startTestServer({ fake, root, config: { changesDir } })).rejects.toMatchObject({
          code: 'SESSION_INITIALIZATION_ERROR',
          details: { resource: 'changesDir' },
        });
      }
      const parent = tempDir('a3s-parent-');
      const inner = join(parent, 'ws');
      mkdirSync(inner);
      await expect(startTestServer({ fake, root: inner, config: { changesDir: parent } })).rejects.toThrow(
        /changes_dir .* holds the workspace root/,
      );
      const changesDir = join(tempDir('a3s-changes-'), 'made');
      const t = await startTestServer({ fake, root, config: { changesDir } });
      try {
        // Made at startup (empty: a store is made at a session's first capture).
        expect(readdirSync(changesDir)).toEqual([]);
      } finally {
        await t.close();
      }
    } finally {
      await fake.close();
    }
  });
});

import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';

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
});

import { describe, expect, it } from 'vitest';
import { ConfigError, formatConfigProblem } from '../../src/config/config-error.js';
import { loadConfig, type LoadConfigOptions } from '../../src/config/load-config.js';
import { SANDBOX_ENV, sandboxEnvName } from '../../src/config/sandbox-env.js';

async function problemsOf(options: LoadConfigOptions): Promise<string[]> {
  try {
    await loadConfig(options);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map(formatConfigProblem);
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('sandbox settings from A3S_SANDBOX_* env variables', () => {
  it('names one variable per sandbox field, in upper snake case', () => {
    expect(SANDBOX_ENV.map((entry) => entry.name).sort()).toEqual([
      'A3S_SANDBOX_ADDRESS_SPACE_MB',
      'A3S_SANDBOX_CGROUPS',
      'A3S_SANDBOX_CPU_SECONDS',
      'A3S_SANDBOX_HOST_DIRECT',
      'A3S_SANDBOX_MEMORY_MB',
      'A3S_SANDBOX_MODE',
      'A3S_SANDBOX_NETWORK',
      'A3S_SANDBOX_PIDS_MAX',
      'A3S_SANDBOX_READ_ONLY_PATHS',
      'A3S_SANDBOX_RUN_AS',
    ]);
    expect(sandboxEnvName('readOnlyPaths')).toBe('A3S_SANDBOX_READ_ONLY_PATHS');
  });

  it('sets every field from its variable', async () => {
    const config = await loadConfig({
      cwd: '/',
      env: {
        A3S_SANDBOX_MODE: 'required',
        A3S_SANDBOX_HOST_DIRECT: 'none',
        A3S_SANDBOX_NETWORK: 'allowed',
        A3S_SANDBOX_PIDS_MAX: '64',
        A3S_SANDBOX_MEMORY_MB: '256',
        A3S_SANDBOX_CPU_SECONDS: '30',
        A3S_SANDBOX_ADDRESS_SPACE_MB: '2048',
        A3S_SANDBOX_READ_ONLY_PATHS: '/opt/node, /opt/tools,,',
        A3S_SANDBOX_RUN_AS: 'nobody',
        A3S_SANDBOX_CGROUPS: 'optional',
      },
    });
    expect(config.sandbox).toEqual({
      mode: 'required',
      hostDirect: 'none',
      network: 'allowed',
      pidsMax: 64,
      memoryMb: 256,
      cpuSeconds: 30,
      addressSpaceMb: 2048,
      readOnlyPaths: ['/opt/node', '/opt/tools'],
      runAs: 'nobody',
      cgroups: 'optional',
    });
  });

  it('wins over the config file field by field; the file keeps the fields no variable sets; empty counts as unset', async () => {
    const configText =
      'sandbox {\n  mode = "auto"\n  network = "allowed"\n  pids_max = 100\n  cgroups = "required"\n}\n';
    const config = await loadConfig({
      cwd: '/',
      configText,
      env: { A3S_SANDBOX_MODE: 'required', A3S_SANDBOX_CGROUPS: 'optional', A3S_SANDBOX_NETWORK: '' },
    });
    expect(config.sandbox).toMatchObject({ mode: 'required', network: 'allowed', pidsMax: 100, cgroups: 'optional' });
  });

  it('leaves the defaults without variables (cgroups unset: required follows the mode)', async () => {
    const config = await loadConfig({ cwd: '/', env: {} });
    expect(config.sandbox.mode).toBeUndefined();
    expect(config.sandbox.cgroups).toBeUndefined();
    expect(config.sandbox.network).toBe('none');
  });

  it.each([
    ['A3S_SANDBOX_MODE', 'off'],
    ['A3S_SANDBOX_HOST_DIRECT', 'yes'],
    ['A3S_SANDBOX_NETWORK', 'host'],
    ['A3S_SANDBOX_CGROUPS', 'maybe'],
    ['A3S_SANDBOX_PIDS_MAX', 'many'],
    ['A3S_SANDBOX_PIDS_MAX', '2'],
    ['A3S_SANDBOX_MEMORY_MB', '-5'],
    ['A3S_SANDBOX_CPU_SECONDS', '1.5'],
    ['A3S_SANDBOX_ADDRESS_SPACE_MB', '0x100'],
    ['A3S_SANDBOX_READ_ONLY_PATHS', 'relative/path'],
    ['A3S_SANDBOX_READ_ONLY_PATHS', '/opt,/proc'],
    ['A3S_SANDBOX_RUN_AS', 'bad user!'],
  ])('a bad %s (%j) fails the start naming the variable', async (name, value) => {
    const problems = await problemsOf({ cwd: '/', env: { [name]: value } });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${name}: sandbox\\.`));
  });

  it('names every bad variable at once', async () => {
    const problems = await problemsOf({
      cwd: '/',
      env: { A3S_SANDBOX_NETWORK: 'host', A3S_SANDBOX_MEMORY_MB: 'lots' },
    });
    expect(problems.map((problem) => problem.split(':')[0]).sort()).toEqual([
      'A3S_SANDBOX_MEMORY_MB',
      'A3S_SANDBOX_NETWORK',
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { CodeConfigSchema } from '../../src/config/code-config.js';
import { loadConfig } from '../../src/config/load-config.js';
import { commandEnvironment, commandEnvProblem, MAX_COMMAND_ENV_VALUE } from '../../src/runtime/sandbox/command-env.js';
import { sandboxMode } from '../../src/runtime/sandbox/start-sandbox.js';

describe('commandEnv and the from-scratch environment', () => {
  it('accepts ordinary names and refuses the ones the sandbox decides or that run code at start', () => {
    expect(commandEnvProblem({ MY_FLAG: 'on', NODE_ENV: 'test' })).toBeUndefined();
    for (const name of [
      'PATH',
      'HOME',
      'TMPDIR',
      'GIT_DIR',
      'GIT_CONFIG_GLOBAL',
      'LD_PRELOAD',
      'BASH_ENV',
      'ENV',
      'NODE_OPTIONS',
      'PROMPT_COMMAND',
      'BASH_FUNC_x%%',
    ]) {
      expect(commandEnvProblem({ [name]: 'x' })?.field, name).toBe(`commandEnv.${name}`);
    }
    expect(commandEnvProblem({ BIG: 'x'.repeat(MAX_COMMAND_ENV_VALUE + 1) })?.message).toContain(
      `${MAX_COMMAND_ENV_VALUE}`,
    );
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`V${i}`, '1']));
    expect(commandEnvProblem(many)?.field).toBe('commandEnv');
  });

  it('builds the environment from scratch: nothing of the server, and extras cannot replace PATH or HOME', () => {
    const env = commandEnvironment('/home/sandbox', '/tmp', { PATH: '/evil', EXTRA: '1' });
    expect(env).toMatchObject({
      PATH: expect.not.stringContaining('/evil'),
      HOME: '/home/sandbox',
      TERM: 'dumb',
      PAGER: 'cat',
      GIT_TERMINAL_PROMPT: '0',
      EXTRA: '1',
    });
    expect(Object.keys(env).some((name) => /REDIS|DATABASE|API_KEY|TOKEN|A3S_/.test(name))).toBe(false);
  });

  it('sandbox.mode defaults to required with API tokens and auto without', () => {
    const base = { defaultModel: 'p/m', providers: { p: { apiKey: 'k', baseUrl: 'http://127.0.0.1:1' } } };
    expect(sandboxMode(CodeConfigSchema.parse(base))).toBe('auto');
    expect(
      sandboxMode(
        CodeConfigSchema.parse({
          ...base,
          apiTokens: [{ token: 'x'.repeat(24), principal: 'a', tenantId: 't', scopes: ['sessions'] }],
        }),
      ),
    ).toBe('required');
    expect(
      sandboxMode(
        CodeConfigSchema.parse({
          ...base,
          apiTokens: [{ token: 'x'.repeat(24), principal: 'a', tenantId: 't', scopes: ['sessions'] }],
          sandbox: { mode: 'auto' },
        }),
      ),
    ).toBe('auto');
    expect(() => CodeConfigSchema.parse({ ...base, sandbox: { network: 'some' } })).toThrow();
  });

  it('reads the ACL block `sandbox { ... }` with snake_case keys', async () => {
    const configText = `default_model = "p/m"\nproviders "p" {\n  api_key = "k"\n  base_url = "http://127.0.0.1:1"\n}\nsandbox {\n  mode = "required"\n  host_direct = "none"\n  network = "allowed"\n  pids_max = 128\n  read_only_paths = ["/opt/node"]\n}\n`;
    const config = await loadConfig({ env: {}, cwd: process.cwd(), configText });
    expect(config.sandbox).toMatchObject({
      mode: 'required',
      hostDirect: 'none',
      network: 'allowed',
      pidsMax: 128,
      readOnlyPaths: ['/opt/node'],
      memoryMb: 4096,
    });
  });
});

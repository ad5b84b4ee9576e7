import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configWarnings, providerKeyWarnings } from '../../src/config/config-warnings.js';
import { ConfigError, formatConfigProblem } from '../../src/config/config-error.js';
import { loadConfig } from '../../src/config/load-config.js';
import { tempDir } from '../support/test-server.js';

function writeConfig(text: string, name = 'a3s.acl'): { dir: string; file: string } {
  const dir = tempDir('a3s-startup-checks-');
  const file = join(dir, name);
  writeFileSync(file, text);
  return { dir, file };
}

async function loadError(options: Parameters<typeof loadConfig>[0]): Promise<ConfigError> {
  const error = await loadConfig(options).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

const PROVIDER = `providers "openai" {
  api_key = "sk-test"
  models "gpt-4o" {}
  models "gpt-4o-mini" {}
}
`;

describe('default_permission_policy rules are parsed at load time', () => {
  it('fails on an invalid rule with its file line, the field and the rule', async () => {
    const { dir, file } = writeConfig(`default_model = "openai/gpt-4o"
${PROVIDER}
default_permission_policy {
  allow = [
    "read",
    "bash(git status",
  ]
  deny = ["write(**)", "not a rule"]
}
`);
    const err = await loadError({ env: {}, cwd: dir, configPath: file });
    expect(err.problems.map(formatConfigProblem)).toEqual([
      `${file}:11: defaultPermissionPolicy.allow[1]: invalid permission rule "bash(git status": expected Tool or Tool(pattern)`,
      `${file}:13: defaultPermissionPolicy.deny[1]: invalid permission rule "not a rule": expected Tool or Tool(pattern)`,
    ]);
  });

  it('names the JSON field of a bad rule in a JSON config', async () => {
    const { dir, file } = writeConfig(
      JSON.stringify(
        {
          default_model: 'openai/gpt-4o',
          providers: { openai: { api_key: 'sk-test' } },
          default_permission_policy: { ask: ['bash(rm *'] },
        },
        null,
        2,
      ),
      'a3s.json',
    );
    const err = await loadError({ env: {}, cwd: dir, configPath: file });
    expect(err.problems.map(formatConfigProblem)).toEqual([
      `${file}:10: defaultPermissionPolicy.ask[0]: invalid permission rule "bash(rm *": expected Tool or Tool(pattern)`,
    ]);
  });

  it('loads a policy whose rules all parse', async () => {
    const { dir, file } = writeConfig(`default_model = "openai/gpt-4o"
${PROVIDER}
default_permission_policy {
  allow = ["read", "bash(git status:*)", "mcp__docs"]
  deny  = ["write(secrets/**)"]
  default_decision = "ask"
}
`);
    const config = await loadConfig({ env: {}, cwd: dir, configPath: file });
    expect(config.defaultPermissionPolicy?.allow).toEqual(['read', 'bash(git status:*)', 'mcp__docs']);
    expect(config.defaultPermissionPolicy?.deny).toEqual(['write(secrets/**)']);
  });
});

describe('default_model names a declared model block', () => {
  it('fails with the line and the declared models when the model is not declared', async () => {
    const { dir, file } = writeConfig(`${PROVIDER}
providers "local" {
  base_url = "http://127.0.0.1:1/v1"
  models "qwen" {}
}

default_model = "openai/gpt-5"
`);
    const err = await loadError({ env: {}, cwd: dir, configPath: file });
    expect(err.problems.map(formatConfigProblem)).toEqual([
      `${file}:12: defaultModel: "openai/gpt-5" names no declared model block of provider "openai" (declared: openai/gpt-4o, openai/gpt-4o-mini, local/qwen)`,
    ]);
  });

  it('names A3S_MODEL when the environment chose the undeclared model', async () => {
    const { dir, file } = writeConfig(`default_model = "openai/gpt-4o"\n${PROVIDER}`);
    const err = await loadError({ env: { A3S_MODEL: 'openai/o3' }, cwd: dir, configPath: file });
    expect(err.problems.map(formatConfigProblem)).toEqual([
      'A3S_MODEL: defaultModel: "openai/o3" names no declared model block of provider "openai" (declared: openai/gpt-4o, openai/gpt-4o-mini)',
    ]);
  });

  it('loads a declared model, and any model of a provider that declares no model blocks', async () => {
    const declared = writeConfig(`default_model = "openai/gpt-4o-mini"\n${PROVIDER}`);
    expect((await loadConfig({ env: {}, cwd: declared.dir, configPath: declared.file })).defaultModel).toBe(
      'openai/gpt-4o-mini',
    );
    const open = writeConfig('default_model = "local/anything"\nproviders "local" {\n  api_key = "k"\n}\n');
    expect((await loadConfig({ env: {}, cwd: open.dir, configPath: open.file })).defaultModel).toBe('local/anything');
  });
});

describe('a provider with no API key is a startup warning', () => {
  it('names the provider and the variable, and says a local endpoint may need none', async () => {
    const { dir, file } = writeConfig(`default_model = "openai/gpt-4o"
providers "openai" {
  base_url = "https://api.openai.com"
}
providers "local" {
  base_url = "http://127.0.0.1:11434/v1"
}
providers "keyed" {
  api_key = "sk-x"
}
providers "proxied" {
  base_url = "https://llm.example.com"
  headers = { Authorization = "Bearer t" }
}
`);
    const config = await loadConfig({ env: {}, cwd: dir, configPath: file });
    expect(providerKeyWarnings(config)).toEqual([
      {
        key: 'providers.openai.api_key',
        message:
          'provider "openai" has no API key (set providers.openai.api_key or the environment variable OPENAI_API_KEY); its requests are sent without credentials and a hosted provider will answer 401',
      },
      {
        key: 'providers.local.api_key',
        message:
          'provider "local" has no API key (set providers.local.api_key (for example api_key = env("LOCAL_API_KEY"))); its endpoint is on this host, so this may be intended for a local server that needs none',
      },
    ]);
    // The startup warnings main.ts logs include them.
    expect(configWarnings(config).map((w) => w.key)).toEqual(['providers.openai.api_key', 'providers.local.api_key']);
  });

  it('does not warn when OPENAI_API_KEY gives the key, and warns when no provider is configured', async () => {
    const { dir, file } = writeConfig('default_model = "openai/gpt-4o"\nproviders "openai" {}\n');
    const config = await loadConfig({ env: { OPENAI_API_KEY: 'sk-env' }, cwd: dir, configPath: file });
    expect(providerKeyWarnings(config)).toEqual([]);
    const bare = await loadConfig({ env: {}, cwd: dir });
    expect(providerKeyWarnings(bare)).toEqual([
      {
        key: 'providers',
        message:
          'no provider is configured, so default_model "openai/gpt-4o" cannot run: set OPENAI_API_KEY (and OPENAI_BASE_URL) or a providers block',
      },
    ]);
  });
});

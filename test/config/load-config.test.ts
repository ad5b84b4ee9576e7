import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, formatConfigProblem } from '../../src/config/config-error.js';
import { loadConfig } from '../../src/config/load-config.js';

const SEED = `default_model = "openai/gpt-4o"
storage_backend = "file"
sessions_dir = "./.a3s/sessions"
max_tool_rounds = 40
skill_dirs = ["./skills"]
agent_dirs = ["./agents"]

providers "openai" {
  api_key  = env("OPENAI_API_KEY")
  base_url = "https://api.openai.com/v1"
  models "gpt-4o" {
    context_window = 128000
    max_tokens = 4096
  }
}

queue {
  max_concurrency = 4
}
`;

const TOKEN = 'tok-0123456789abcdef';

let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'a3s-config-'));
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

async function loadError(options: Parameters<typeof loadConfig>[0]): Promise<ConfigError> {
  try {
    await loadConfig(options);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected loadConfig to fail');
}

describe('loadConfig from an HCL file', () => {
  it('loads the seed example', async () => {
    const file = write('a3s.acl', SEED);
    const config = await loadConfig({ env: { OPENAI_API_KEY: 'sk-seed' }, cwd: dir, configPath: file });
    expect(config.defaultModel).toBe('openai/gpt-4o');
    expect(config.storageBackend).toBe('file');
    expect(config.sessionsDir).toBe(path.join(dir, '.a3s/sessions'));
    expect(config.dataDir).toBe(path.join(dir, '.a3s'));
    expect(config.loop.maxToolRounds).toBe(40);
    expect(config.loop.maxParseRetries).toBe(2);
    expect(config.skillDirs).toEqual(['./skills']);
    expect(config.agentDirs).toEqual(['./agents']);
    expect(config.providers.openai).toEqual({
      apiKey: 'sk-seed',
      baseUrl: 'https://api.openai.com/v1',
      timeoutMs: 600_000,
      maxRetries: 2,
      models: { 'gpt-4o': { contextWindow: 128000, maxTokens: 4096 } },
    });
    expect(config.queue).toEqual({ maxConcurrency: 4 });
    expect(config.workspaceRoots).toEqual([dir]);
    expect(config.port).toBe(8080);
    expect(config.host).toBe('127.0.0.1');
    expect(config.apiTokens).toEqual([]);
  });

  it('names the line and variable when env() has no value', async () => {
    const file = write('a3s.hcl', SEED);
    const err = await loadError({ env: {}, cwd: dir, configPath: file });
    expect(err.message).toContain(
      `${file}:9:14: env("OPENAI_API_KEY"): environment variable OPENAI_API_KEY is not set`,
    );
    expect(err.problems).toHaveLength(1);
  });

  it('reads the file named by A3S_CONFIG, relative to cwd', async () => {
    write('from-env.hcl', 'port = 9000\nhost = "0.0.0.0"');
    const config = await loadConfig({ env: { A3S_CONFIG: 'from-env.hcl' }, cwd: dir });
    expect(config.port).toBe(9000);
    expect(config.host).toBe('0.0.0.0');
  });

  it('prefers configPath over A3S_CONFIG', async () => {
    const file = write('explicit.hcl', 'port = 1');
    const config = await loadConfig({ env: { A3S_CONFIG: path.join(dir, 'missing.hcl') }, cwd: dir, configPath: file });
    expect(config.port).toBe(1);
  });

  it('treats unknown extensions as HCL', async () => {
    const file = write('server.conf', 'log_level = "debug"');
    expect((await loadConfig({ env: {}, cwd: dir, configPath: file })).logLevel).toBe('debug');
  });

  it('accepts repeated api_token blocks and a loop block', async () => {
    const file = write(
      'tokens.hcl',
      [
        'api_token {',
        `  token = "${TOKEN}"`,
        '  principal = "ci"',
        '  tenant_id = "t1"',
        '  scopes = ["sessions"]',
        '}',
        'api_token {',
        `  token_sha256 = "${'a'.repeat(64)}"`,
        '  principal = "ops"',
        '  tenant_id = "t2"',
        '  scopes = ["sessions", "host_direct", "admin"]',
        '}',
        'loop {',
        '  tool_timeout_ms = 1000',
        '  continuation_enabled = true',
        '}',
        'limits { max_runs = 5 }',
        'workspace_roots = ["ws", "/abs/root"]',
        'data_dir = "data"',
      ].join('\n'),
    );
    const config = await loadConfig({ env: {}, cwd: dir, configPath: file });
    expect(config.apiTokens).toEqual([
      { token: TOKEN, principal: 'ci', tenantId: 't1', scopes: ['sessions'] },
      { tokenSha256: 'a'.repeat(64), principal: 'ops', tenantId: 't2', scopes: ['sessions', 'host_direct', 'admin'] },
    ]);
    expect(config.loop.toolTimeoutMs).toBe(1000);
    expect(config.loop.continuationEnabled).toBe(true);
    expect(config.limits.maxRuns).toBe(5);
    expect(config.limits.maxSessions).toBe(100_000);
    expect(config.workspaceRoots).toEqual([path.join(dir, 'ws'), '/abs/root']);
    expect(config.dataDir).toBe(path.join(dir, 'data'));
    expect(config.sessionsDir).toBe(path.join(dir, 'data', 'sessions'));
  });

  it('reports a syntax error with file, line and column and stops there', async () => {
    const file = write('bad.hcl', 'port = 1\nhost = "unterminated\nnot_a_key = 1');
    const err = await loadError({ env: {}, cwd: dir, configPath: file });
    expect(err.problems).toEqual([{ source: file, line: 2, column: 8, message: 'unterminated string' }]);
    expect(err.message).toContain(`${file}:2:8: unterminated string`);
  });

  it('reports a duplicate attribute naming both lines', async () => {
    const file = write('dup.hcl', 'port = 1\n\nport = 2');
    const err = await loadError({ env: {}, cwd: dir, configPath: file });
    expect(err.message).toContain(`${file}:3:1: duplicate attribute "port" at line 3: already defined at line 1`);
  });

  it('names a missing file', async () => {
    const err = await loadError({ env: {}, cwd: dir, configPath: 'nope.hcl' });
    expect(err.message).toContain(`${path.join(dir, 'nope.hcl')}: config file not found`);
    const viaEnv = await loadError({ env: { A3S_CONFIG: 'gone.acl' }, cwd: dir });
    expect(viaEnv.message).toContain(`${path.join(dir, 'gone.acl')}: config file not found (named by A3S_CONFIG)`);
  });

  it('lists every schema problem with file, line and field path', async () => {
    const file = write(
      'many.hcl',
      [
        'port = "eighty"', // 1
        'storage_backend = "s3"', // 2
        'unknown_thing = true', // 3
        'providers "openai" {', // 4
        '  base_url = "not a url"', // 5
        '  api_kee = "typo"', // 6
        '  models "gpt-4o" {', // 7
        '    context_window = -1', // 8
        '  }', // 9
        '}', // 10
        'api_token {', // 11
        '  token = "short"', // 12
        '  principal = "ci"', // 13
        '}', // 14
        'max_tool_rounds = 0', // 15
      ].join('\n'),
    );
    const err = await loadError({ env: {}, cwd: dir, configPath: file });
    const lines = err.problems.map(formatConfigProblem);
    expect(lines).toEqual(
      expect.arrayContaining([
        `${file}:1: port: Invalid input: expected number, received string`,
        expect.stringMatching(new RegExp(`^${escape(file)}:2: storageBackend: `)),
        `${file}:3: unknown_thing: unknown key`,
        `${file}:5: providers.openai.baseUrl: baseUrl must be a URL`,
        `${file}:6: providers.openai.api_kee: unknown key`,
        expect.stringMatching(new RegExp(`^${escape(file)}:8: providers\\.openai\\.models\\.gpt-4o\\.contextWindow: `)),
        `${file}:12: apiTokens[0].token: token must be at least 16 characters`,
        `${file}:11: apiTokens[0].tenantId: required (expected string)`,
        `${file}:11: apiTokens[0].scopes: required (expected array)`,
        expect.stringMatching(new RegExp(`^${escape(file)}:15: loop\\.maxToolRounds: `)),
      ]),
    );
    expect(err.problems).toHaveLength(10);
    // File problems are listed in line order.
    const order = err.problems.map((p) => p.line ?? 0);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(err.message.split('\n')[0]).toBe('invalid configuration (10 problems):');
  });

  it('reports a spelling conflict together with schema problems', async () => {
    const file = write('conflict.hcl', 'providers "openai" {\n  apiKey = "a"\n  api_key = "b"\n}\nport = -1');
    const err = await loadError({ env: {}, cwd: dir, configPath: file });
    expect(err.problems.map(formatConfigProblem)).toEqual([
      `${file}:3: providers.openai.apiKey: both "apiKey" (line 2) and "api_key" (line 3) are set; use one spelling`,
      expect.stringMatching(new RegExp(`^${escape(file)}:5: port: `)),
    ]);
  });

  it('requires defaultModel to name a configured provider', async () => {
    const file = write(
      'model.hcl',
      'providers "local" {\n  base_url = "http://127.0.0.1:1/v1"\n}\n\ndefault_model = "openai/gpt-4o"',
    );
    const err = await loadError({ env: {}, cwd: dir, configPath: file });
    expect(err.problems.map(formatConfigProblem)).toEqual([
      `${file}:5: defaultModel: provider "openai" of "openai/gpt-4o" is not configured (configured: local)`,
    ]);
    const defaulted = write('model2.hcl', 'providers "local" {}');
    const err2 = await loadError({ env: {}, cwd: dir, configPath: defaulted });
    expect(err2.message).toContain(`${defaulted}: defaultModel: provider "openai"`);
  });
});

describe('loadConfig from a JSON file', () => {
  it('loads snake_case or camelCase JSON', async () => {
    const file = write(
      'a3s.json',
      JSON.stringify({
        defaultModel: 'local/qwen',
        providers: { local: { base_url: 'http://127.0.0.1:9/v1', models: { qwen: { contextWindow: 32768 } } } },
        api_tokens: [{ token: TOKEN, principal: 'p', tenant_id: 't', scopes: ['sessions'] }],
        loop: { maxToolRounds: 7 },
        max_parse_retries: 0,
      }),
    );
    const config = await loadConfig({ env: {}, cwd: dir, configPath: file });
    expect(config.defaultModel).toBe('local/qwen');
    expect(config.providers.local?.baseUrl).toBe('http://127.0.0.1:9/v1');
    expect(config.providers.local?.models.qwen?.contextWindow).toBe(32768);
    expect(config.apiTokens[0]?.tenantId).toBe('t');
    expect(config.loop.maxToolRounds).toBe(7);
    expect(config.loop.maxParseRetries).toBe(0);
  });

  it('does not evaluate env() in JSON and reports syntax errors with line and column', async () => {
    const file = write('bad.json', '{\n  "port": 1,\n  "host": ,\n}');
    const err = await loadError({ env: {}, cwd: dir, configPath: file });
    expect(err.problems).toHaveLength(1);
    expect(err.message).toContain(`${file}:3:11: expected a value but found ','`);
  });

  it('names lines of schema problems in JSON', async () => {
    const file = write(
      'lines.json',
      '{\n  "port": 1,\n  "providers": {\n    "openai": {\n      "baseUrl": "nope"\n    }\n  }\n}',
    );
    const err = await loadError({ env: {}, cwd: dir, configPath: file });
    expect(err.problems.map(formatConfigProblem)).toEqual([
      `${file}:5: providers.openai.baseUrl: baseUrl must be a URL`,
    ]);
  });

  it('rejects a JSON document that is not an object', async () => {
    const file = write('list.json', '[]');
    const err = await loadError({ env: {}, cwd: dir, configPath: file });
    expect(err.message).toContain('the configuration must be an object, got an array');
  });

  it('keeps __proto__ keys as data and rejects them as unknown', async () => {
    const file = write('proto.json', '{"__proto__": {"port": 1}}');
    const err = await loadError({ env: {}, cwd: dir, configPath: file });
    expect(err.message).toContain(`${file}:1: __proto__: unknown key`);
  });
});

describe('loadConfig from the environment', () => {
  it('uses defaults with an empty environment', async () => {
    const config = await loadConfig({ env: {}, cwd: dir });
    expect(config).toMatchObject({
      defaultModel: 'openai/gpt-4o',
      providers: {},
      storageBackend: 'file',
      dataDir: path.join(dir, '.a3s'),
      sessionsDir: path.join(dir, '.a3s', 'sessions'),
      host: '127.0.0.1',
      port: 8080,
      workspaceRoots: [dir],
      apiTokens: [],
      logLevel: 'info',
    });
  });

  it('builds the whole config from env only', async () => {
    const env = {
      OPENAI_API_KEY: 'sk-env',
      OPENAI_BASE_URL: 'http://127.0.0.1:4010/v1',
      A3S_MODEL: 'openai/gpt-4o-mini',
      A3S_DATA_DIR: 'state',
      A3S_HOST: '0.0.0.0',
      A3S_PORT: '0',
      A3S_API_TOKENS: JSON.stringify([
        { token: TOKEN, principal: 'bot', tenantId: 'acme', scopes: ['sessions', 'host_direct'] },
      ]),
      A3S_WORKSPACE_ROOTS: ' ws1 , /abs/ws2 ,',
      A3S_ALLOWED_HOSTS: 'a3s.example.com, 10.0.0.5:8080',
      A3S_ALLOWED_ORIGINS: 'https://console.example.com',
      A3S_LOG_LEVEL: 'debug',
      A3S_STORAGE_BACKEND: 'memory',
    };
    const config = await loadConfig({ env, cwd: dir });
    expect(config.providers).toEqual({
      openai: {
        apiKey: 'sk-env',
        baseUrl: 'http://127.0.0.1:4010/v1',
        chatCompletionsUrl: 'http://127.0.0.1:4010/v1/chat/completions',
        timeoutMs: 600_000,
        maxRetries: 2,
        models: {},
      },
    });
    expect(config.defaultModel).toBe('openai/gpt-4o-mini');
    expect(config.dataDir).toBe(path.join(dir, 'state'));
    expect(config.sessionsDir).toBe(path.join(dir, 'state', 'sessions'));
    expect(config.host).toBe('0.0.0.0');
    expect(config.port).toBe(0);
    expect(config.apiTokens).toEqual([
      { token: TOKEN, principal: 'bot', tenantId: 'acme', scopes: ['sessions', 'host_direct'] },
    ]);
    expect(config.workspaceRoots).toEqual([path.join(dir, 'ws1'), '/abs/ws2']);
    expect(config.allowedHosts).toEqual(['a3s.example.com', '10.0.0.5:8080']);
    expect(config.allowedOrigins).toEqual(['https://console.example.com']);
    expect(config.logLevel).toBe('debug');
    expect(config.storageBackend).toBe('memory');
  });

  it('lets env win over the file', async () => {
    const file = write(
      'a3s.hcl',
      [
        'port = 1234',
        'host = "127.0.0.1"',
        'default_model = "openai/gpt-4o"',
        'providers "openai" {',
        '  api_key = "sk-file"',
        '  base_url = "https://file.example/v1"',
        '}',
        'providers "other" {}',
        `api_tokens = [{ token = "${TOKEN}", principal = "file", tenant_id = "f", scopes = ["admin"] }]`,
        'workspace_roots = ["/from/file"]',
      ].join('\n'),
    );
    const env = {
      OPENAI_API_KEY: 'sk-env',
      A3S_PORT: '4321',
      A3S_MODEL: 'other/model',
      A3S_API_TOKENS: JSON.stringify([{ token: TOKEN, principal: 'env', tenant_id: 'e', scopes: ['sessions'] }]),
      A3S_WORKSPACE_ROOTS: '/from/env',
      A3S_HOST: '',
    };
    const config = await loadConfig({ env, cwd: dir, configPath: file });
    expect(config.port).toBe(4321);
    expect(config.host).toBe('127.0.0.1');
    expect(config.defaultModel).toBe('other/model');
    expect(config.providers.openai?.apiKey).toBe('sk-env');
    expect(config.providers.openai?.baseUrl).toBe('https://file.example/v1');
    expect(config.apiTokens).toEqual([{ token: TOKEN, principal: 'env', tenantId: 'e', scopes: ['sessions'] }]);
    expect(config.workspaceRoots).toEqual(['/from/env']);
  });

  it('creates the openai provider from env next to file providers', async () => {
    const file = write('p.hcl', 'providers "local" {}\ndefault_model = "openai/gpt-4o"');
    const config = await loadConfig({ env: { OPENAI_API_KEY: 'sk' }, cwd: dir, configPath: file });
    expect(Object.keys(config.providers).sort()).toEqual(['local', 'openai']);
  });

  const badPorts = ['abc', '-1', '65536', '80.5', '1e3'];
  it.each(badPorts)('rejects A3S_PORT=%s naming the variable', async (port) => {
    const err = await loadError({ env: { A3S_PORT: port }, cwd: dir });
    expect(err.problems.map(formatConfigProblem)).toEqual([
      `A3S_PORT: port: must be an integer 0-65535, got ${JSON.stringify(port)}`,
    ]);
  });

  it('accepts A3S_PORT=65535', async () => {
    expect((await loadConfig({ env: { A3S_PORT: '65535' }, cwd: dir })).port).toBe(65535);
  });

  it('rejects A3S_API_TOKENS that is not JSON', async () => {
    const err = await loadError({ env: { A3S_API_TOKENS: '[{token: nope}' }, cwd: dir });
    expect(err.problems).toHaveLength(1);
    expect(formatConfigProblem(err.problems[0]!)).toMatch(
      /^A3S_API_TOKENS: apiTokens: not valid JSON \(.+\); expected a JSON array/,
    );
  });

  it('rejects A3S_API_TOKENS that is not an array', async () => {
    const err = await loadError({ env: { A3S_API_TOKENS: '{"token": "x"}' }, cwd: dir });
    expect(err.message).toContain('A3S_API_TOKENS: apiTokens: expected a JSON array');
  });

  it('names the env variable for schema problems in env values', async () => {
    const env = {
      A3S_API_TOKENS: JSON.stringify([{ token: 'short', principal: 'p', tenantId: 't', scopes: ['root'] }]),
      OPENAI_BASE_URL: 'not-a-url',
      A3S_LOG_LEVEL: 'loud',
      A3S_STORAGE_BACKEND: 'redis',
      A3S_MODEL: 'no-slash',
      A3S_PORT: 'x',
    };
    const err = await loadError({ env, cwd: dir });
    const lines = err.problems.map(formatConfigProblem);
    expect(lines).toEqual(
      expect.arrayContaining([
        'A3S_API_TOKENS: apiTokens[0].token: token must be at least 16 characters',
        expect.stringMatching(/^A3S_API_TOKENS: apiTokens\[0\]\.scopes\[0\]: /),
        'OPENAI_BASE_URL: providers.openai.baseUrl: baseUrl must be a URL',
        expect.stringMatching(/^A3S_LOG_LEVEL: logLevel: /),
        expect.stringMatching(/^A3S_STORAGE_BACKEND: storageBackend: /),
        'A3S_MODEL: defaultModel: defaultModel must be "provider/model"',
        'A3S_PORT: port: must be an integer 0-65535, got "x"',
      ]),
    );
    expect(lines).toHaveLength(7);
  });

  it('names the env variable over a file line it overrode', async () => {
    const file = write('o.hcl', 'log_level = "info"');
    const err = await loadError({ env: { A3S_LOG_LEVEL: 'loud' }, cwd: dir, configPath: file });
    expect(err.problems[0]?.source).toBe('A3S_LOG_LEVEL');
    expect(err.problems[0]?.line).toBeUndefined();
  });

  it('rejects an empty A3S_WORKSPACE_ROOTS list', async () => {
    const err = await loadError({ env: { A3S_WORKSPACE_ROOTS: ' , ' }, cwd: dir });
    expect(err.message).toContain('A3S_WORKSPACE_ROOTS: workspaceRoots: ');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

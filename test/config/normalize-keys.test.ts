import { describe, it, expect } from 'vitest';
import { parseHcl } from '../../src/config/hcl-parser.js';
import { normalizeConfigKeys, snakeToCamel } from '../../src/config/normalize-keys.js';

describe('snakeToCamel', () => {
  const cases: [string, string][] = [
    ['api_key', 'apiKey'],
    ['base_url', 'baseUrl'],
    ['default_model', 'defaultModel'],
    ['max_tool_rounds', 'maxToolRounds'],
    ['token_sha256', 'tokenSha256'],
    ['apiKey', 'apiKey'],
    ['port', 'port'],
    ['gpt-4o', 'gpt-4o'],
    ['__proto__', '__proto__'],
    ['API_KEY', 'API_KEY'],
    ['trailing_', 'trailing_'],
  ];
  it.each(cases)('%s -> %s', (input, expected) => {
    expect(snakeToCamel(input)).toBe(expected);
  });
});

describe('normalizeConfigKeys', () => {
  const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
    [
      'top-level snake_case',
      {
        default_model: 'a/b',
        storage_backend: 'file',
        sessions_dir: 's',
        data_dir: 'd',
        log_level: 'info',
        skill_dirs: ['x'],
        agent_dirs: [],
        workspace_roots: ['/w'],
      },
      {
        defaultModel: 'a/b',
        storageBackend: 'file',
        sessionsDir: 's',
        dataDir: 'd',
        logLevel: 'info',
        skillDirs: ['x'],
        agentDirs: [],
        workspaceRoots: ['/w'],
      },
    ],
    ['camelCase kept', { defaultModel: 'a/b', dataDir: 'd' }, { defaultModel: 'a/b', dataDir: 'd' }],
    [
      'provider and model names kept verbatim',
      {
        providers: {
          my_provider: {
            api_key: 'k',
            base_url: 'u',
            timeout_ms: 1,
            max_retries: 2,
            models: { 'gpt-4o': { context_window: 1, max_tokens: 2 }, my_model: { name: 'x' } },
          },
        },
      },
      {
        providers: {
          my_provider: {
            apiKey: 'k',
            baseUrl: 'u',
            timeoutMs: 1,
            maxRetries: 2,
            models: { 'gpt-4o': { contextWindow: 1, maxTokens: 2 }, my_model: { name: 'x' } },
          },
        },
      },
    ],
    [
      'top-level loop settings move into loop',
      { max_tool_rounds: 40, tool_timeout_ms: 5, continuation_enabled: true },
      { loop: { maxToolRounds: 40, toolTimeoutMs: 5, continuationEnabled: true } },
    ],
    [
      'loop block',
      { loop: { max_parse_retries: 1, max_execution_time_ms: 9 } },
      { loop: { maxParseRetries: 1, maxExecutionTimeMs: 9 } },
    ],
    [
      'top-level and block loop settings merge',
      { loop: { max_parse_retries: 1 }, max_tool_rounds: 3 },
      { loop: { maxParseRetries: 1, maxToolRounds: 3 } },
    ],
    [
      'limits block',
      { limits: { body_limit_bytes: 10, max_events_per_run: 20 } },
      { limits: { bodyLimitBytes: 10, maxEventsPerRun: 20 } },
    ],
    [
      'queue keys camelised recursively',
      { queue: { max_concurrency: 4, lanes: { fast_lane: { max_size: 1 } } } },
      { queue: { maxConcurrency: 4, lanes: { fastLane: { maxSize: 1 } } } },
    ],
    [
      'api_tokens list',
      { api_tokens: [{ token: 't', tenant_id: 'x', principal: 'p', scopes: ['admin'] }] },
      { apiTokens: [{ token: 't', tenantId: 'x', principal: 'p', scopes: ['admin'] }] },
    ],
    [
      'single api_token block',
      { api_token: { token_sha256: 'h', tenant_id: 'x' } },
      { apiTokens: [{ tokenSha256: 'h', tenantId: 'x' }] },
    ],
    [
      'repeated api_token blocks',
      { api_token: [{ tenant_id: 'a' }, { tenant_id: 'b' }] },
      { apiTokens: [{ tenantId: 'a' }, { tenantId: 'b' }] },
    ],
    [
      'unknown keys keep their spelling',
      { foo_bar: 1, providers: { p: { api_kee: 'x' } } },
      { foo_bar: 1, providers: { p: { api_kee: 'x' } } },
    ],
    ['scalar values untouched', { host: 'h_o_s_t', port: 1 }, { host: 'h_o_s_t', port: 1 }],
  ];
  it.each(cases)('%s', (_name, input, expected) => {
    const result = normalizeConfigKeys(input);
    expect(result.problems).toEqual([]);
    expect(result.value).toEqual(expected);
  });

  it('re-keys the line map to the normalised paths', () => {
    const parsed = parseHcl(
      [
        'max_tool_rounds = 40',
        'providers "openai" {',
        '  api_key = "k"',
        '}',
        'api_token {',
        '  tenant_id = "t"',
        '}',
      ].join('\n'),
    );
    const { lines } = normalizeConfigKeys(parsed.value, parsed.lines);
    expect(lines.get('loop.maxToolRounds')).toBe(1);
    expect(lines.get('providers.openai.apiKey')).toBe(3);
    expect(lines.get('apiTokens')).toBe(5);
    expect(lines.get('apiTokens[0]')).toBe(5);
    expect(lines.get('apiTokens[0].tenantId')).toBe(6);
  });

  const conflicts: [string, string, string, number, RegExp][] = [
    [
      'both spellings at top level',
      'default_model = "a/b"\ndefaultModel = "a/c"',
      'defaultModel',
      2,
      /both "default_model" \(line 1\) and "defaultModel" \(line 2\) are set/,
    ],
    [
      'both spellings in a provider',
      'providers "p" {\n  apiKey = "a"\n  api_key = "b"\n}',
      'providers.p.apiKey',
      3,
      /both "apiKey" \(line 2\) and "api_key" \(line 3\)/,
    ],
    [
      'both spellings in queue',
      'queue {\n  max_concurrency = 1\n  maxConcurrency = 2\n}',
      'queue.maxConcurrency',
      3,
      /both/,
    ],
    [
      'api_tokens and api_token',
      'api_tokens = []\napi_token {\n}',
      'apiTokens',
      2,
      /both "api_tokens" \(line 1\) and "api_token" \(line 2\)/,
    ],
    [
      'loop setting at top level and in loop block',
      'loop {\n  max_tool_rounds = 1\n}\nmax_tool_rounds = 2',
      'loop.maxToolRounds',
      4,
      /"max_tool_rounds" \(line 4\) is already set \(line 2\)/,
    ],
    [
      'loop setting spelled twice at top level',
      'max_tool_rounds = 1\nmaxToolRounds = 2',
      'loop.maxToolRounds',
      2,
      /already set \(line 1\)/,
    ],
  ];
  it.each(conflicts)('%s is a problem', (_name, source, path, line, message) => {
    const parsed = parseHcl(source);
    const { problems } = normalizeConfigKeys(parsed.value, parsed.lines);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.path).toBe(path);
    expect(problems[0]?.line).toBe(line);
    expect(problems[0]?.message).toMatch(message);
  });

  it('reports a non-object configuration', () => {
    expect(normalizeConfigKeys([1]).problems[0]?.message).toMatch(/must be an object, got an array/);
    expect(normalizeConfigKeys(null).problems[0]?.message).toMatch(/got null/);
  });

  it('reports loop settings next to a non-block loop', () => {
    const { problems } = normalizeConfigKeys({ loop: 5, max_tool_rounds: 1 });
    expect(problems[0]?.message).toMatch(/loop is not a block/);
  });
});

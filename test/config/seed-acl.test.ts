import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configWarnings } from '../../src/config/config-warnings.js';
import { modelRequestDefaults } from '../../src/config/model-request-defaults.js';
import { ConfigError, formatConfigProblem } from '../../src/config/config-error.js';
import { loadConfig } from '../../src/config/load-config.js';
import { tempDir } from '../support/test-server.js';

const FIXTURES = join(process.cwd(), 'test', 'fixtures', 'config');

/** Every top-level key of the seed's ACL loader, plus a model block with every seed model key. */
const FULL_SEED = readFileSync(join(FIXTURES, 'seed-all-keys.acl'), 'utf8');

async function loadError(options: Parameters<typeof loadConfig>[0]): Promise<ConfigError> {
  const error = await loadConfig(options).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

function writeAcl(text: string, name = 'a3s.acl'): { dir: string; file: string } {
  const dir = tempDir('a3s-seed-acl-');
  const file = join(dir, name);
  writeFileSync(file, text);
  return { dir, file };
}

describe('the seed ACL, key for key', () => {
  it('loads the API.md seed example verbatim, keeping the model key apart from its display name', async () => {
    const { dir, file } = writeAcl(readFileSync(join(FIXTURES, 'seed-contract.acl'), 'utf8'));
    const config = await loadConfig({ env: {}, cwd: dir, configPath: file });
    expect(config.defaultModel).toBe('openai/docs-fake');
    expect(config.storageBackend).toBe('file');
    expect(config.sessionsDir).toBe('/var/lib/a3s/sessions');
    expect(config.providers.openai).toMatchObject({ apiKey: 'test-key', baseUrl: 'http://127.0.0.1:4000' });
    expect(config.providers.openai?.models).toEqual({
      'docs-fake': { name: 'Docs Fake', toolCall: true },
      'docs-alt': { name: 'Docs Alt', toolCall: true },
    });
    expect(configWarnings(config)).toEqual([]);
  });

  it('accepts every seed top-level key and names the unused ones in warnings', async () => {
    const { dir, file } = writeAcl(FULL_SEED);
    const config = await loadConfig({ env: {}, cwd: dir, configPath: file });
    expect(config.storageBackend).toBe('memory');
    expect(config.loop.maxToolRounds).toBe(24);
    expect(config.taskScheduler).toEqual({ maxActive: 8, agingIntervalMs: 500 });
    expect(config.search).toEqual({ headless: { backend: 'moli', autoDownloadMoli: false, maxTabs: 2 } });
    expect(config.projectDocFallbackFilenames).toEqual(['CLAUDE.md']);
    expect(config.skillDirs).toEqual(['./skills']);
    // project_doc_max_bytes is the AGENTS.md budget; llm_api_timeout_ms the timeout of providers without one.
    expect(config.limits.agentsMdBytes).toBe(65536);
    expect(config.providers.openai?.timeoutMs).toBe(30000);
    expect(config.providers.openai?.headers).toEqual({ 'X-Team': 'docs' });
    expect(configWarnings(config).map((w) => w.key)).toEqual([
      'memory_dir',
      'memory',
      'storage_url',
      'task_scheduler',
      'search',
      'document_parser',
      'auto_parallel',
      'auto_delegation',
      'thinking_budget',
      'os',
      'queue',
      'providers.openai.session_id_header',
      'providers.openai.models.docs-fake.base_url',
    ]);
    expect(configWarnings(config)[3]?.message).toBe(
      'task_scheduler is accepted for compatibility with A3S Code but not used by this server yet',
    );
  });

  it('reads every seed model key and keeps unknown model keys as metadata', async () => {
    const { dir, file } = writeAcl(FULL_SEED);
    const config = await loadConfig({ env: {}, cwd: dir, configPath: file });
    const model = config.providers.openai?.models['docs-fake'];
    expect(model).toEqual({
      name: 'Docs Fake',
      family: 'fake',
      toolCall: true,
      temperature: true,
      reasoning: false,
      attachment: true,
      releaseDate: '2025-01-01',
      limit: { context: 128000, output: 4096 },
      cost: { input: 1.5, output: 6, cacheRead: 0.1 },
      modalities: { input: ['text', 'image'], output: ['text'] },
      baseUrl: 'http://127.0.0.1:4001',
      knowledge: '2024-10',
      open_weights: true,
    });
    // limit.output is max_tokens; `temperature = true` only says the model takes one.
    expect(modelRequestDefaults(model)).toEqual({ maxTokens: 4096 });
    expect(modelRequestDefaults(model, 0.3)).toEqual({ maxTokens: 4096, temperature: 0.3 });
  });

  it('sends a numeric model temperature by default and none when the model takes none', () => {
    expect(modelRequestDefaults({ temperature: 0.2, maxTokens: 100 })).toEqual({ maxTokens: 100, temperature: 0.2 });
    expect(modelRequestDefaults({ temperature: 0.2 }, 0.9)).toEqual({ temperature: 0.9 });
    expect(modelRequestDefaults({ temperature: false }, 0.9)).toEqual({});
    expect(modelRequestDefaults(undefined, 0.5)).toEqual({ temperature: 0.5 });
  });

  it('still fails on keys the seed does not have, with file, line and field', async () => {
    const { dir, file } = writeAcl(
      [
        'default_model = "openai/m"', // 1
        'task_scheduler { max_active = 2 }', // 2
        'no_such_key = 1', // 3
        'providers "openai" {', // 4
        '  base_uri = "http://x"', // 5
        '  models "m" { temperature = "hot"  limit = { output = -1 } }', // 6
        '}', // 7
        'storage_backend = "custom"', // 8
      ].join('\n'),
    );
    const err = await loadError({ env: {}, cwd: dir, configPath: file });
    expect(err.problems.map(formatConfigProblem)).toEqual([
      `${file}:3: no_such_key: unknown key`,
      `${file}:5: providers.openai.base_uri: unknown key`,
      expect.stringMatching(
        new RegExp(
          `^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:6: providers\\.openai\\.models\\.m\\.temperature: `,
        ),
      ),
      expect.stringMatching(/:6: providers\.openai\.models\.m\.limit\.output: /),
      `${file}:8: storageBackend: storage_backend must be "file" or "memory" (for an external store set redis_url or REDIS_URL)`,
    ]);
  });

  it('takes the seed spellings of mcp_servers blocks and skills', async () => {
    const { dir, file } = writeAcl(
      [
        'skills = ["./s"]',
        'mcp_servers "echo" {',
        '  transport = { type = "stdio", command = "node", args = ["x.mjs"] }',
        '}',
      ].join('\n'),
    );
    const config = await loadConfig({ env: {}, cwd: dir, configPath: file });
    expect(config.skillDirs).toEqual(['./s']);
    expect(config.mcp).toEqual({ echo: { transport: { type: 'stdio', command: 'node', args: ['x.mjs'] } } });
  });

  it('refuses project_doc_max_bytes next to limits.agents_md_bytes; 0 (the chain off) loads without a warning', async () => {
    const both = writeAcl('project_doc_max_bytes = 1000\nlimits { agents_md_bytes = 2000 }\n');
    const err = await loadError({ env: {}, cwd: both.dir, configPath: both.file });
    expect(err.problems.map(formatConfigProblem)).toEqual([
      `${both.file}:1: projectDocMaxBytes: both project_doc_max_bytes and limits.agents_md_bytes are set; set one of them`,
    ]);
    const zero = writeAcl('project_doc_max_bytes = 0\n');
    const config = await loadConfig({ env: {}, cwd: zero.dir, configPath: zero.file });
    expect(config.projectDocMaxBytes).toBe(0);
    // Only the missing provider is named: 0 is acted on (no AGENTS.md is read; see agents-md-chain.test.ts).
    expect(configWarnings(config).map((w) => w.key)).toEqual(['providers']);
    const path = writeAcl('project_doc_fallback_filenames = ["../x.md"]\n');
    const bad = await loadError({ env: {}, cwd: path.dir, configPath: path.file });
    expect(bad.problems.map(formatConfigProblem).join('\n')).toContain('must be a file name, not a path');
  });
});

describe('inline ACL text (A3S_CONFIG_TEXT)', () => {
  it('loads ACL text from the environment, relative paths against cwd', async () => {
    const dir = tempDir('a3s-text-');
    const config = await loadConfig({
      env: {
        A3S_CONFIG_TEXT: readFileSync(join(FIXTURES, 'seed-contract.acl'), 'utf8').replace(
          '/var/lib/a3s/sessions',
          './s',
        ),
      },
      cwd: dir,
    });
    expect(config.defaultModel).toBe('openai/docs-fake');
    expect(config.sessionsDir).toBe(join(dir, 's'));
  });

  it('takes configText as an option too, and env overlays still win', async () => {
    const config = await loadConfig({
      env: { A3S_MODEL: 'openai/docs-alt' },
      cwd: tempDir(),
      configText: readFileSync(join(FIXTURES, 'seed-contract.acl'), 'utf8'),
    });
    expect(config.defaultModel).toBe('openai/docs-alt');
  });

  it('reports problems under A3S_CONFIG_TEXT with their line', async () => {
    const err = await loadError({
      env: { A3S_CONFIG_TEXT: 'default_model = "openai/m"\nbogus = 1\n' },
      cwd: tempDir(),
    });
    expect(err.problems.map(formatConfigProblem)).toEqual(['A3S_CONFIG_TEXT:2: bogus: unknown key']);
    const syntax = await loadError({ env: { A3S_CONFIG_TEXT: 'port = \n' }, cwd: tempDir() });
    expect(formatConfigProblem(syntax.problems[0] ?? { source: '', message: '' })).toMatch(/^A3S_CONFIG_TEXT:2:1: /);
  });

  it('refuses JSON inline', async () => {
    const err = await loadError({ env: { A3S_CONFIG_TEXT: '{"port": 1}' }, cwd: tempDir() });
    expect(err.message).toContain('A3S_CONFIG_TEXT:1: holds JSON; inline configuration is ACL text');
  });

  it('is a startup error together with a config path', async () => {
    const { dir, file } = writeAcl('port = 1\n');
    const viaEnv = await loadError({ env: { A3S_CONFIG_TEXT: 'port = 2\n', A3S_CONFIG: file }, cwd: dir });
    expect(viaEnv.problems.map(formatConfigProblem)).toEqual([
      'A3S_CONFIG_TEXT: both A3S_CONFIG_TEXT (inline ACL text) and A3S_CONFIG (a config file) are set; set only one of them',
    ]);
    const viaFlag = await loadError({ env: { A3S_CONFIG_TEXT: 'port = 2\n' }, cwd: dir, configPath: file });
    expect(viaFlag.message).toContain('both A3S_CONFIG_TEXT (inline ACL text) and --config (a config file) are set');
  });
});

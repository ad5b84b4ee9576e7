import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { client, ndJsonStream, type SessionUpdate } from '@agentclientprotocol/sdk';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { CodeConfigSchema, type CodeConfig } from '../../src/config/code-config.js';
import { providerKeyWarnings } from '../../src/config/config-warnings.js';
import { ConfigError } from '../../src/config/config-error.js';
import { loadConfig } from '../../src/config/load-config.js';
import { chatCompletionsUrl } from '../../src/runtime/llm/chat-completions-url.js';
import { noSandbox } from '../../src/runtime/sandbox/start-sandbox.js';
import { startServer } from '../../src/server/start-server.js';
import { buildCli, removeCli } from '../cli/a3s-process.js';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { startFakeProvider } from '../support/fake-provider.js';
import { createSession, eventually, toolMessage, useTestServers } from '../support/run-helpers.js';
import { tempDir, type TestServer } from '../support/test-server.js';

const REPO = process.cwd();
const DOC = readFileSync(join(REPO, 'docs', 'recipes.md'), 'utf8');
const HAVE_BWRAP = bwrapWorks();

/** One fenced block of docs/recipes.md: its language, its text, and the `<!-- recipe: name -->` marker above it. */
interface Block {
  lang: string;
  text: string;
  name?: string;
}

const BLOCKS: Block[] = [...DOC.matchAll(/(?:<!-- recipe: ([a-z-]+) -->\n\n)?```([a-z]*)\n([\s\S]*?)```/g)].map(
  (m) => ({ lang: m[2] ?? '', text: m[3] ?? '', ...(m[1] ? { name: m[1] } : {}) }),
);

function recipe(name: string): Block {
  const found = BLOCKS.filter((b) => b.name === name);
  expect(found, `docs/recipes.md has one block marked "recipe: ${name}"`).toHaveLength(1);
  return found[0] as Block;
}

/** Load ACL text with the server's own loader, as a file `A3S_CONFIG` names. */
async function loadHcl(text: string, env: NodeJS.ProcessEnv = {}): Promise<CodeConfig> {
  const dir = tempDir('a3s-recipe-');
  const file = join(dir, 'a3s.hcl');
  writeFileSync(file, text);
  return loadConfig({ env, cwd: dir, configPath: file });
}

/** The text with runs of whitespace made single spaces (the doc wraps its quotes). */
const flat = (text: string): string => text.replace(/\s+/g, ' ');

describe('docs/recipes.md: every block is one the server takes', () => {
  it('every hcl block loads through the config loader, and a misspelt key would not', async () => {
    const hcl = BLOCKS.filter((b) => b.lang === 'hcl');
    expect(hcl.length).toBeGreaterThanOrEqual(4);
    for (const block of hcl) {
      await expect(loadHcl(block.text, { LOCAL_API_KEY: 'local' }), block.text).resolves.toBeDefined();
    }
    // The check is real: the same block with one key misspelt is refused, naming the key and its line.
    const misspelt = recipe('team-policy').text.replace('default_decision', 'default_desicion');
    await expect(loadHcl(misspelt)).rejects.toThrow(ConfigError);
    await expect(loadHcl(misspelt)).rejects.toThrow(/:6: .*defaultDesicion/);
  });

  it('every json block parses; the Zed block names the a3s bin and its acp command', () => {
    const json = BLOCKS.filter((b) => b.lang === 'json');
    expect(json.length).toBeGreaterThanOrEqual(2);
    for (const block of json) expect(() => JSON.parse(block.text) as unknown, block.text).not.toThrow();
    const zed = JSON.parse(recipe('zed').text) as {
      agent_servers: Record<string, { command: string; args: string[] }>;
    };
    expect(Object.values(zed.agent_servers)).toEqual([expect.objectContaining({ command: 'a3s', args: ['acp'] })]);
  });

  it('the workflow YAML parses, and its "Fix, then verify" step is the tested command block', async () => {
    const yaml = BLOCKS.filter((b) => b.lang === 'yaml');
    expect(yaml).toHaveLength(1);
    const workflow = parseYaml(yaml[0]?.text ?? '') as {
      jobs: Record<string, { steps: Array<{ name?: string; run?: string; 'working-directory'?: string }> }>;
    };
    const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
    const fix = steps.find((step) => step.name === 'Fix, then verify');
    expect(fix?.['working-directory']).toBe('a3s');
    expect(fix?.run).toBe(recipe('ci-commands').text);
    // The server step reads the recipe's server config, and its A3S_API_TOKENS line (run in bash) is a token the
    // loader takes, with both scopes `a3s verify` needs.
    const server = steps.find((step) => step.name === 'Start A3S Code Server') as {
      env?: Record<string, string>;
      run?: string;
    };
    expect(server.env?.A3S_CONFIG).toBe('../project/.github/a3s-ci-server.hcl');
    const exportLine = (server.run ?? '').split('\n').find((line) => line.startsWith('export A3S_API_TOKENS='));
    const shell = spawnSync(
      'bash',
      ['-c', `token=a3s_0123456789abcdef0123\n${exportLine}\nprintf %s "$A3S_API_TOKENS"`],
      {
        encoding: 'utf8',
      },
    );
    const loaded = await loadConfig({ env: { A3S_API_TOKENS: shell.stdout }, cwd: tempDir('a3s-recipe-') });
    expect(loaded.apiTokens).toEqual([
      { token: 'a3s_0123456789abcdef0123', principal: 'ci', tenantId: 'default', scopes: ['sessions', 'host_direct'] },
    ]);
  });

  it('the team and CI policies load as written', async () => {
    const team = await loadHcl(recipe('team-policy').text);
    expect(team.defaultPermissionPolicy).toEqual({
      allow: ['read', 'ls', 'grep', 'glob'],
      ask: ['bash', 'write'],
      deny: ['web_fetch', 'web_search'],
      defaultDecision: 'ask',
      enabled: true,
    });
    expect(team.defaultConfirmationPolicy).toEqual({
      enabled: true,
      defaultTimeoutMs: 120_000,
      timeoutAction: 'reject',
    });
    const ci = await loadHcl(recipe('ci-policy').text);
    expect(ci.defaultPermissionPolicy?.defaultDecision).toBe('deny');
    expect(ci.defaultConfirmationPolicy?.enabled).toBe(false);
    const server = await loadHcl(recipe('ci-server').text);
    expect(server.sandbox).toMatchObject({ network: 'allowed', cgroups: 'optional' });
    // A3S_SANDBOX_NETWORK, the doc's alternative, sets the same key.
    expect((await loadHcl('', { A3S_SANDBOX_NETWORK: 'allowed' })).sandbox.network).toBe('allowed');
  });
});

describe('the policies decide real tool calls', () => {
  const start = useTestServers();

  it('team: read runs, bash asks and runs once approved, write asks and is rejected, web tools are not offered', async () => {
    const team = await loadHcl(recipe('team-policy').text);
    const t = await start({
      files: { 'notes.txt': 'team notes\n' },
      config: {
        defaultPermissionPolicy: team.defaultPermissionPolicy,
        defaultConfirmationPolicy: team.defaultConfirmationPolicy,
      },
    });
    const offered = (names: string[]) => {
      expect(names).toEqual(expect.arrayContaining(['read', 'bash', 'write']));
      expect(names).not.toContain('web_fetch');
      expect(names).not.toContain('web_search');
    };
    const toolNames = (tools: Array<Record<string, unknown>> | undefined) =>
      (tools ?? []).map((tool) => String((tool.function as { name?: string } | undefined)?.name));
    t.fake.script(
      {
        toolCalls: [
          { id: 'c_read', name: 'read', arguments: { file_path: 'notes.txt' } },
          { id: 'c_bash', name: 'bash', arguments: { command: 'echo approved-by-a-human' } },
        ],
        expect: (req) => offered(toolNames(req.body.tools)),
      },
      { toolCalls: [{ id: 'c_write', name: 'write', arguments: { file_path: 'out.txt', content: 'x' } }] },
      { text: 'done' },
    );
    const id = await createSession(t);
    const started = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'go' }).expect(202);
    const answer = async (toolId: string, approved: boolean) => {
      let pending: { toolId: string; argsDigest: string } | undefined;
      await eventually(async () => {
        const list = (await request(t.url).get(`/v1/sessions/${id}/confirmations`).expect(200)).body
          .confirmations as Array<{ toolId: string; argsDigest: string }>;
        pending = list.find((c) => c.toolId === toolId);
        return pending !== undefined;
      }, `a confirmation for ${toolId}`);
      await request(t.url)
        .post(`/v1/sessions/${id}/confirmations/${toolId}`)
        .send({ approved, argsDigest: pending?.argsDigest })
        .expect(200);
    };
    await answer('c_bash', true);
    await answer('c_write', false);
    await eventually(async () => {
      const run = (await request(t.url).get(`/v1/sessions/${id}/runs/${started.body.runId as string}`)).body.run;
      return run.status === 'completed';
    }, 'the run to complete');
    expect(toolMessage(t, 'c_read')).toContain('team notes');
    expect(toolMessage(t, 'c_bash')).toContain('approved-by-a-human');
    expect(toolMessage(t, 'c_write')).toMatch(/reject/i);
    expect(existsSync(join(t.root, 'out.txt'))).toBe(false);
    t.fake.assertDone();
  }, 60_000);

  it('CI: write runs without asking, any other command is denied, web tools are not offered', async () => {
    const ci = await loadHcl(recipe('ci-policy').text);
    const t = await start({
      config: {
        defaultPermissionPolicy: ci.defaultPermissionPolicy,
        defaultConfirmationPolicy: ci.defaultConfirmationPolicy,
      },
    });
    t.fake.script(
      {
        toolCalls: [
          { id: 'c_write', name: 'write', arguments: { file_path: 'fix.txt', content: 'fixed\n' } },
          { id: 'c_curl', name: 'bash', arguments: { command: 'curl https://example.com' } },
          { id: 'c_chain', name: 'bash', arguments: { command: 'npm ci && curl https://example.com' } },
        ],
        expect: (req) => {
          const names = (req.body.tools ?? []).map((tool) => (tool.function as { name: string }).name);
          expect(names).not.toContain('web_fetch');
        },
      },
      { text: 'done' },
    );
    const id = await createSession(t);
    const run = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'go', wait: true }).expect(200);
    expect(run.body.run.status).toBe('completed');
    expect(readFileSync(join(t.root, 'fix.txt'), 'utf8')).toBe('fixed\n');
    expect(toolMessage(t, 'c_curl')).toMatch(/denied/i);
    expect(toolMessage(t, 'c_chain')).toMatch(/denied/i);
  }, 60_000);
});

/** A one-package "registry": the tarball of `tiny` served over HTTP on 127.0.0.1, as a lockfile's `resolved` URL. */
async function startTarballServer(): Promise<{ url: string; integrity: string; close(): Promise<void> }> {
  const dir = tempDir('a3s-tiny-');
  mkdirSync(join(dir, 'package'));
  writeFileSync(join(dir, 'package', 'package.json'), JSON.stringify({ name: 'tiny', version: '1.0.0' }));
  writeFileSync(join(dir, 'package', 'index.js'), 'module.exports = (a, b) => a + b;\n');
  const made = spawnSync('tar', ['-czf', join(dir, 'tiny-1.0.0.tgz'), '-C', dir, 'package']);
  expect(made.status, String(made.stderr)).toBe(0);
  const tarball = readFileSync(join(dir, 'tiny-1.0.0.tgz'));
  const integrity = `sha512-${createHash('sha512').update(tarball).digest('base64')}`;
  const server: Server = createServer((req, res) => {
    if (req.url === '/tiny-1.0.0.tgz') res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(tarball);
    else res.writeHead(404).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, integrity, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** The project the CI recipe works on: a failing test, a dependency only the "registry" has, the recipe's policy file. */
function writeProject(parent: string, registry: { url: string; integrity: string }): string {
  const project = join(parent, 'project');
  mkdirSync(join(project, '.github'), { recursive: true });
  const pkg = { name: 'demo', version: '1.0.0', scripts: { test: 'node test.js' }, dependencies: { tiny: '1.0.0' } };
  writeFileSync(join(project, 'package.json'), JSON.stringify(pkg, null, 2));
  const lock = {
    name: 'demo',
    version: '1.0.0',
    lockfileVersion: 3,
    requires: true,
    packages: {
      '': { name: 'demo', version: '1.0.0', dependencies: { tiny: '1.0.0' } },
      'node_modules/tiny': {
        version: '1.0.0',
        resolved: `${registry.url}/tiny-1.0.0.tgz`,
        integrity: registry.integrity,
      },
    },
  };
  writeFileSync(join(project, 'package-lock.json'), JSON.stringify(lock, null, 2));
  writeFileSync(
    join(project, '.npmrc'),
    `registry=${registry.url}/\naudit=false\nfund=false\nupdate-notifier=false\nfetch-retries=0\n`,
  );
  writeFileSync(join(project, 'lib.js'), "module.exports = require('tiny')(2, 2) === 5;\n");
  writeFileSync(
    join(project, 'test.js'),
    "if (require('./lib.js') !== true) { console.error('lib is wrong'); process.exit(1); }\n",
  );
  writeFileSync(join(project, '.github', 'a3s-policy.json'), recipe('ci-policy-file').text);
  chmodSync(project, 0o755);
  return project;
}

/** Run the CI recipe's command block as GitHub Actions runs a `run:` step (bash -e), `npx a3s` being the built CLI. */
function runCiBlock(cli: string, cwd: string, url: string): Promise<{ code: number | null; out: string }> {
  const npx = `npx() { if [ "$1" = a3s ]; then shift; node ${JSON.stringify(cli)} "$@"; else command npx "$@"; fi; }`;
  const child = spawn('bash', ['-e', '-c', `${npx}\n${recipe('ci-commands').text}`], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tempDir('a3s-ci-home-'), A3S_URL: url },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
}

describe.skipIf(!HAVE_BWRAP)('the CI recipe, run as written', () => {
  const start = useTestServers();
  let cli: string;
  let registry: Awaited<ReturnType<typeof startTarballServer>>;
  beforeAll(async () => {
    cli = buildCli();
    registry = await startTarballServer();
  }, 120_000);
  afterAll(async () => {
    if (cli) removeCli(cli);
    await registry?.close();
  });

  async function ciServer(sandbox: CodeConfig['sandbox'] | undefined): Promise<{ t: TestServer; parent: string }> {
    const parent = tempDir('a3s-ci-job-');
    mkdirSync(join(parent, 'a3s'));
    const project = writeProject(parent, registry);
    const policy = JSON.parse(recipe('ci-policy-file').text) as { permissionPolicy: unknown };
    const t = await start({
      root: project,
      // The anonymous loopback caller of a test server has host_direct, so the session's own policy applies.
      config: { defaultPermissionPolicy: policy.permissionPolicy, ...(sandbox ? { sandbox } : {}) },
    });
    return { t, parent };
  }

  it('with the recipe sandbox: the fix lands in fix.patch and npm ci && npm test verify it through the registry', async () => {
    const { sandbox } = await loadHcl(recipe('ci-server').text);
    const { t, parent } = await ciServer(sandbox);
    t.fake.script(
      {
        toolCalls: [
          {
            id: 'c_fix',
            name: 'write',
            arguments: { file_path: 'lib.js', content: "module.exports = require('tiny')(2, 2) === 4;\n" },
          },
        ],
      },
      { text: 'Fixed the expected sum in lib.js.' },
    );
    const { code, out } = await runCiBlock(cli, join(parent, 'a3s'), t.url);
    expect(code, out).toBe(0);
    const patch = readFileSync(join(parent, 'fix.patch'), 'utf8');
    expect(patch).toContain('lib.js');
    expect(patch).toContain("+module.exports = require('tiny')(2, 2) === 4;");
    expect(out).toMatch(/passed\s+cmd-1\s+npm ci/);
    expect(out).toMatch(/passed\s+cmd-2\s+npm test/);
    expect(out).toContain('ci: unit tests: passed');
    t.fake.assertDone();
  }, 180_000);

  it('a run that changes nothing: exit 5 from a3s run, the block says so and ends 0 without verifying', async () => {
    const { sandbox } = await loadHcl(recipe('ci-server').text);
    const { t, parent } = await ciServer(sandbox);
    t.fake.script({ text: 'I found nothing to change.' });
    const { code, out } = await runCiBlock(cli, join(parent, 'a3s'), t.url);
    expect(code, out).toBe(0);
    expect(out).toMatch(/\[patch\] run \S+ (changed no file|has no change set)/);
    expect(out).toContain('the agent changed nothing');
    expect(out).not.toContain('ci: unit tests');
    expect(existsSync(join(parent, 'fix.patch'))).toBe(false);
  }, 120_000);

  it('without sandbox.network = "allowed": npm ci cannot reach the registry, and the block fails with exit 1', async () => {
    const { t, parent } = await ciServer(undefined);
    t.fake.script(
      {
        toolCalls: [
          {
            id: 'c_fix',
            name: 'write',
            arguments: { file_path: 'lib.js', content: "module.exports = require('tiny')(2, 2) === 4;\n" },
          },
        ],
      },
      { text: 'Fixed.' },
    );
    const { code, out } = await runCiBlock(cli, join(parent, 'a3s'), t.url);
    expect(code, out).toBe(1);
    expect(out).toMatch(/failed\s+cmd-1\s+npm ci/);
    expect(out).toContain('ci: unit tests: failed');
  }, 180_000);
});

describe('runners without bwrap, as the recipe states it', () => {
  it('mode auto: a sessions-only caller gets every command refused with the sentence the doc quotes', async () => {
    const fake = await startFakeProvider();
    const token = 'token-recipes-sessions-only-01';
    const config = CodeConfigSchema.parse({
      defaultModel: 'openai/test-model',
      providers: { openai: { apiKey: 'sk-test', baseUrl: fake.baseUrl, maxRetries: 0 } },
      dataDir: tempDir('a3s-data-'),
      host: '127.0.0.1',
      port: 0,
      workspaceRoots: [tempDir('a3s-ws-')],
      logLevel: 'silent',
      apiTokens: [{ token, principal: 'bot', tenantId: 'team', scopes: ['sessions'] }],
      sandbox: { mode: 'auto' },
      defaultPermissionPolicy: { allow: ['bash'] },
    });
    const server = await startServer(config, { logger: pino({ level: 'silent' }), sandbox: await noSandbox(config) });
    try {
      const auth = { authorization: `Bearer ${token}` };
      const id = (await request(server.url).post('/v1/sessions').set(auth).send({}).expect(201)).body.session.id;
      fake.script(
        { toolCalls: [{ id: 'c_b', name: 'bash', arguments: { command: 'echo on-the-runner' } }] },
        { text: 'ok' },
      );
      const run = await request(server.url)
        .post(`/v1/sessions/${id as string}/runs`)
        .set(auth)
        .send({ input: 'go', wait: true })
        .expect(200);
      expect(run.body.run.status).toBe('completed');
      const said = fake.requests
        .flatMap((r) => r.body.messages)
        .find((m) => m.role === 'tool' && m.tool_call_id === 'c_b')?.content;
      expect(String(said)).not.toContain('on-the-runner');
      const sentence = /Commands are refused in this session[^.]*\./.exec(String(said))?.[0];
      expect(sentence, String(said)).toBeDefined();
      expect(flat(DOC)).toContain(flat(sentence ?? 'missing'));
    } finally {
      await server.close();
      await fake.close();
    }
  }, 60_000);

  it('the start-up messages the doc quotes are the ones start-sandbox.ts writes', () => {
    const source = flat(readFileSync(join(REPO, 'src', 'runtime', 'sandbox', 'start-sandbox.ts'), 'utf8'));
    for (const quoted of [
      'sandbox.mode is "required" (the default when API tokens are configured) but no sandbox works: ',
      'install bubblewrap and enable user namespaces (docs/deployment.md for containers)',
      ', or set sandbox.mode = "auto"',
      'sandbox: none — model-chosen commands run on the host, and only in sessions created with host_direct',
    ]) {
      expect(source).toContain(quoted);
      expect(flat(DOC)).toContain(quoted);
    }
  });
});

describe.skipIf(!HAVE_BWRAP)('Zed: the agent_servers block, launched as Zed launches it', () => {
  const start = useTestServers();
  let cli: string;
  beforeAll(() => {
    cli = buildCli();
  }, 120_000);
  afterAll(() => {
    if (cli) removeCli(cli);
  });

  it('runs `a3s` from PATH with its args and env, and answers initialize, session/new and a prompt', async () => {
    const t = await start();
    const entry = Object.values(
      (
        JSON.parse(recipe('zed').text) as {
          agent_servers: Record<string, { command: string; args: string[]; env: Record<string, string> }>;
        }
      ).agent_servers,
    )[0];
    if (!entry) throw new Error('no agent_servers entry');
    // The a3s bin on PATH, as `npm link` puts it there.
    const bin = tempDir('a3s-bin-');
    writeFileSync(
      join(bin, 'a3s'),
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(cli)} "$@"\n`,
    );
    chmodSync(join(bin, 'a3s'), 0o755);
    // The block's env, its URL pointed at the test server (the only rewrite).
    const env = Object.fromEntries(
      Object.entries(entry.env).map(([k, v]) => [k, v.replace('http://127.0.0.1:8080', t.url)]),
    );
    const child = spawn(entry.command, entry.args, {
      env: { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: tempDir('a3s-home-'), ...env },
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const stream = ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
    );
    const updates: SessionUpdate[] = [];
    const app = client({ name: 'zed-recipe' }).onNotification('session/update', ({ params }) => {
      updates.push(params.update);
    });
    await app.connectWith(stream, async (ctx) => {
      const init = await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
      expect(init.protocolVersion).toBe(1);
      const created = await ctx.request('session/new', { cwd: t.root, mcpServers: [] });
      t.fake.script({ text: 'hello from the server', chunks: 2 });
      const answered = await ctx.request('session/prompt', {
        sessionId: created.sessionId,
        prompt: [{ type: 'text', text: 'hi' }],
      });
      expect(answered.stopReason).toBe('end_turn');
    });
    const text = updates
      .flatMap((u) => (u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' ? [u.content.text] : []))
      .join('');
    expect(text).toBe('hello from the server');
    child.stdin.end();
    expect(await exited).toBe(0);
  }, 120_000);
});

describe('a local model server', () => {
  const start = useTestServers();

  it('the HCL provider: requests go to <base_url>/v1/chat/completions with the block label as the model', async () => {
    const block = recipe('local-model').text;
    const loaded = await loadHcl(block);
    const local = loaded.providers.local;
    expect(loaded.defaultModel).toBe('local/qwen2.5-coder:7b');
    expect(chatCompletionsUrl(local?.baseUrl ?? '')).toBe('http://127.0.0.1:11434/v1/chat/completions');
    // No api_key: one warning, which says a provider on this host may need none.
    const warnings = providerKeyWarnings(loaded);
    expect(warnings.map((w) => w.key)).toEqual(['providers.local.api_key']);
    expect(warnings[0]?.message).toMatch(/may be intended/);
    // The same block, its URL pointed at the test's fake provider: a real run.
    const fake = await startFakeProvider();
    try {
      const origin = new URL(fake.baseUrl).origin;
      const rewritten = await loadHcl(block.replace('http://127.0.0.1:11434', origin));
      const t = await start({ fake, config: { defaultModel: rewritten.defaultModel, providers: rewritten.providers } });
      fake.script({
        text: 'local answer',
        expect: (req) => {
          expect(req.body.model).toBe('qwen2.5-coder:7b');
          expect(req.body.max_tokens).toBe(4096);
        },
      });
      const id = await createSession(t);
      const run = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'hi', wait: true }).expect(200);
      expect(run.body.result.text).toBe('local answer');
      fake.assertDone();
    } finally {
      await fake.close();
    }
  }, 60_000);

  it('the environment line: OPENAI_BASE_URL keeps its /v1, and the model goes as named', async () => {
    const line = /^OPENAI_BASE_URL=\S+ .*npm start$/m.exec(DOC.slice(DOC.indexOf('## A local model server')))?.[0];
    expect(line).toBeDefined();
    const env = Object.fromEntries(
      (line ?? '')
        .split(' ')
        .filter((word) => word.includes('='))
        .map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]),
    );
    const loaded = await loadConfig({ env, cwd: tempDir('a3s-recipe-') });
    expect(loaded.providers.openai?.chatCompletionsUrl).toBe('http://127.0.0.1:11434/v1/chat/completions');
    expect(loaded.defaultModel).toBe('openai/qwen2.5-coder:7b');
    const fake = await startFakeProvider();
    try {
      const rewritten = await loadConfig({
        env: { ...env, OPENAI_BASE_URL: fake.baseUrl },
        cwd: tempDir('a3s-recipe-'),
      });
      const t = await start({ fake, config: { defaultModel: rewritten.defaultModel, providers: rewritten.providers } });
      fake.script({ text: 'via env', expect: (req) => expect(req.body.model).toBe('qwen2.5-coder:7b') });
      const id = await createSession(t);
      const run = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'hi', wait: true }).expect(200);
      expect(run.body.result.text).toBe('via env');
    } finally {
      await fake.close();
    }
  }, 60_000);
});

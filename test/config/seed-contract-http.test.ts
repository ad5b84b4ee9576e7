import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { startFakeProvider, type FakeProvider, type FakeProviderOptions } from '../support/fake-provider.js';
import { tempDir } from '../support/test-server.js';

const SEED_ACL = readFileSync(join(process.cwd(), 'test', 'fixtures', 'config', 'seed-contract.acl'), 'utf8');
// The API.md example writes this provider root; the tests point it at the fake.
const SEED_BASE_URL = 'http://127.0.0.1:4000';

interface Running {
  server: RunningServer;
  fake: FakeProvider;
  sessionsDir: string;
}

describe('the seed ACL over HTTP', () => {
  const open: Running[] = [];
  afterEach(async () => {
    for (const r of open.splice(0)) {
      await r.server.close();
      await r.fake.close();
    }
  });

  /** Loads ACL text as the server process would (A3S_CONFIG_TEXT), on a random port, and starts a real server. */
  async function serve(
    acl: (fake: FakeProvider, sessionsDir: string) => string,
    fakeOptions: FakeProviderOptions = {},
    env: (fake: FakeProvider) => Record<string, string> = () => ({}),
  ): Promise<Running> {
    const fake = await startFakeProvider(fakeOptions);
    const cwd = tempDir('a3s-seed-http-');
    const sessionsDir = join(cwd, 'acl-storage');
    const config = await loadConfig({
      env: {
        A3S_CONFIG_TEXT: acl(fake, sessionsDir),
        A3S_PORT: '0',
        A3S_DATA_DIR: join(cwd, 'data'),
        A3S_LOG_LEVEL: 'silent',
        ...env(fake),
      },
      cwd,
    });
    const server = await startServer(config, { logger: pino({ level: 'silent' }) });
    const running = { server, fake, sessionsDir };
    open.push(running);
    return running;
  }

  async function runOnce(
    r: Running,
    session: Record<string, unknown>,
    text: string,
  ): Promise<{ id: string; result: { text: string } }> {
    const created = await request(r.server.url).post('/v1/sessions').send(session).expect(201);
    const id = (created.body as { session: { id: string } }).session.id;
    const run = await request(r.server.url)
      .post(`/v1/sessions/${id}/runs`)
      .send({ input: 'hello', wait: true })
      .expect(200);
    expect(run.body.result.text).toBe(text);
    return { id, result: run.body.result as { text: string } };
  }

  const seedAcl = (fake: FakeProvider, sessionsDir: string): string =>
    SEED_ACL.replace(SEED_BASE_URL, fake.rootUrl).replace('/var/lib/a3s/sessions', sessionsDir);

  it('reaches <base_url>/v1/chat/completions with the model key, and stores the session under sessions_dir', async () => {
    const r = await serve(seedAcl);
    r.fake.script({ text: 'seed ok' });
    const { id } = await runOnce(r, { autoSave: true }, 'seed ok');
    r.fake.assertDone();
    expect(r.fake.requests).toHaveLength(1);
    expect(r.fake.requests[0]?.body.model).toBe('docs-fake');
    expect(r.fake.requests[0]?.headers.authorization).toBe('Bearer test-key');
    // storage_backend = "file": one snapshot per session under sessions_dir.
    expect(existsSync(join(r.sessionsDir, 'default', `${id}.json`))).toBe(true);
  });

  it('sends the model key of SessionOptions.model, never the display name', async () => {
    const r = await serve(seedAcl);
    r.fake.script({ text: 'alt ok' });
    await runOnce(r, { model: 'openai/docs-alt' }, 'alt ok');
    r.fake.assertDone();
    expect(r.fake.requests[0]?.body.model).toBe('docs-alt');
  });

  it('keeps nothing on disk with storage_backend = "memory"', async () => {
    const r = await serve((fake, dir) =>
      seedAcl(fake, dir).replace('storage_backend = "file"', 'storage_backend = "memory"'),
    );
    r.fake.script({ text: 'mem ok' });
    await runOnce(r, { autoSave: true }, 'mem ok');
    r.fake.assertDone();
    expect(existsSync(r.sessionsDir) ? readdirSync(r.sessionsDir) : []).toEqual([]);
  });

  it('appends only /chat/completions to a base_url that ends in /v1', async () => {
    const r = await serve((fake, dir) => seedAcl(fake, dir).replace(fake.rootUrl, `${fake.rootUrl}/v1/`));
    r.fake.script({ text: 'v1 ok' });
    await runOnce(r, {}, 'v1 ok');
    r.fake.assertDone();
    expect(r.fake.requests[0]?.body.model).toBe('docs-fake');
  });

  it('uses chat_completions_path in place of /v1/chat/completions', async () => {
    const acl = (fake: FakeProvider, dir: string): string =>
      seedAcl(fake, dir).replace(
        'providers "openai" {',
        'providers "openai" {\n  chat_completions_path = "/chat/completions"',
      );
    const r = await serve(acl, { chatPath: '/chat/completions' });
    r.fake.script({ text: 'path ok' });
    await runOnce(r, {}, 'path ok');
    r.fake.assertDone();
    expect(r.fake.requests).toHaveLength(1);
  });

  it('fails the run when the provider is called at the wrong path (the fake is strict)', async () => {
    // The fake serves /chat/completions only; the seed base_url sends /v1/chat/completions.
    const r = await serve(
      (fake, dir) => seedAcl(fake, dir).replace('providers "openai" {', 'providers "openai" {\n  max_retries = 0'),
      { chatPath: '/chat/completions' },
    );
    const created = await request(r.server.url).post('/v1/sessions').send({}).expect(201);
    const id = (created.body as { session: { id: string } }).session.id;
    const run = await request(r.server.url).post(`/v1/sessions/${id}/runs`).send({ input: 'hello', wait: true });
    expect(run.status).toBe(200);
    expect(run.body.run.status).toBe('failed');
    expect(r.fake.requests).toHaveLength(0);
    expect(r.fake.failures.map((f) => `${f.method} ${f.path}`)).toContain('POST /v1/chat/completions');
    expect(() => r.fake.assertDone()).toThrow(/unexpected POST \/v1\/chat\/completions/);
  });

  it('gives OPENAI_BASE_URL the openai SDK meaning: it includes the version, only /chat/completions follows', async () => {
    // Under the seed's base_url meaning this root would get /v1/chat/completions; the env variable keeps the SDK's.
    const r = await serve(seedAcl, { chatPath: '/openai/chat/completions' }, (fake) => ({
      OPENAI_BASE_URL: `${fake.rootUrl}/openai`,
    }));
    r.fake.script({ text: 'sdk ok' });
    await runOnce(r, {}, 'sdk ok');
    r.fake.assertDone();
    expect(r.fake.requests[0]?.body.model).toBe('docs-fake');
  });
});

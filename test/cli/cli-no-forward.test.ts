import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { redisServerConfig } from '../support/redis-target.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { buildCli, removeCli, runA3s } from './a3s-process.js';

const TOKEN = 'tok-cli-no-forward-0123456789abcdef';

describe('a3s --no-forward / A3S_ROUTE=no-forward: a 421 is followed once to the owner', () => {
  let cli: string;
  let fake: FakeProvider;
  let a: TestServer;
  let b: TestServer;
  let home: string;
  beforeAll(async () => {
    cli = buildCli();
    fake = await startFakeProvider();
    const shared = {
      ...redisServerConfig(),
      redisKeyPrefix: `a3s-cli-nf-${Math.random().toString(36).slice(2)}:`,
      apiTokens: [{ token: TOKEN, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] }],
    };
    a = await startTestServer({ fake, config: { ...shared, nodeId: 'node-a' } });
    // B has no peer URLs, so it cannot forward: it answers 421 SESSION_OWNED_ELSEWHERE naming A for A's sessions.
    b = await startTestServer({ fake, config: { ...shared, nodeId: 'node-b', cluster: { peerUrls: [] } } });
    home = tempDir('a3s-cli-home-');
  }, 120_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await fake?.close();
    if (cli) removeCli(cli);
  });

  it('sessions show on B: 421 without the option (exit 1), followed to A with --no-forward or A3S_ROUTE (exit 0)', async () => {
    await request(a.url)
      .post('/v1/sessions')
      .set('authorization', `Bearer ${TOKEN}`)
      .send({ sessionId: 'owned-by-a' })
      .expect(201);
    const env = { HOME: home, A3S_URL: b.url, A3S_TOKEN: TOKEN };
    const plain = await runA3s(cli, ['sessions', 'show', 'owned-by-a'], { env });
    expect(plain.code).toBe(1);
    expect(plain.stderr).toMatch(/^a3s: SESSION_OWNED_ELSEWHERE: /);
    const flag = await runA3s(cli, ['sessions', 'show', 'owned-by-a', '--no-forward'], { env });
    expect(flag.code).toBe(0);
    expect(JSON.parse(flag.stdout)).toMatchObject({ id: 'owned-by-a', closed: false });
    const viaEnv = await runA3s(cli, ['sessions', 'close', 'owned-by-a'], { env: { ...env, A3S_ROUTE: 'no-forward' } });
    expect(viaEnv).toMatchObject({ code: 0, stdout: 'closed owned-by-a\n' });
  });

  it('a bad A3S_ROUTE is a usage error (exit 2); acp refuses --no-forward by name', async () => {
    const bad = await runA3s(cli, ['sessions', 'ls'], {
      env: { HOME: home, A3S_URL: b.url, A3S_TOKEN: TOKEN, A3S_ROUTE: 'sideways' },
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('A3S_ROUTE must be "forward" or "no-forward", got "sideways"');
    const acp = await runA3s(cli, ['acp', '--no-forward'], { env: { HOME: home, A3S_URL: b.url, A3S_TOKEN: TOKEN } });
    expect(acp.code).toBe(2);
    expect(acp.stderr).toContain('--no-forward does not apply to acp');
  });
});

import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { buildCli, removeCli, runA3s } from './a3s-process.js';

let cli: string;
const servers: TestServer[] = [];
beforeAll(() => {
  cli = buildCli();
}, 120_000);
afterAll(async () => {
  for (const t of servers) await t.close();
  if (cli) removeCli(cli);
});

describe('a3s token new', () => {
  it('prints a fresh token once and the api_token block with its hash; a server with that block accepts it', async () => {
    const made = await runA3s(cli, [
      'token',
      'new',
      '--principal',
      'ci-bot',
      '--tenant',
      'acme',
      '--scope',
      'sessions',
    ]);
    expect(made.code).toBe(0);
    const token = /^token: (a3s_[A-Za-z0-9_-]{43})$/m.exec(made.stdout)?.[1];
    expect(token).toBeDefined();
    const block = made.stdout.slice(made.stdout.indexOf('api_token {'));
    expect(block).not.toContain(token);
    // The block loads as the server's config, unchanged.
    const config = await loadConfig({ env: {}, cwd: process.cwd(), configText: block });
    expect(config.apiTokens).toEqual([
      {
        tokenSha256: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown,
        principal: 'ci-bot',
        tenantId: 'acme',
        scopes: ['sessions'],
      },
    ]);
    const t = await startTestServer({ config: { apiTokens: config.apiTokens } });
    servers.push(t);
    await request(t.url).get('/v1/sessions').set('authorization', `Bearer ${token}`).expect(200);
    await request(t.url).get('/v1/sessions').set('authorization', `Bearer ${token}x`).expect(401);
    const again = await runA3s(cli, ['token', 'new', '--json']);
    const json = JSON.parse(again.stdout) as {
      token: string;
      tokenSha256: string;
      scopes: string[];
      principal: string;
    };
    expect(json).toMatchObject({ principal: 'local', scopes: ['sessions'] });
    expect(json.token).not.toBe(token);
  });

  it('refuses an unknown scope, a bad tenant and a missing "new" with exit 2 naming the flag', async () => {
    const scope = await runA3s(cli, ['token', 'new', '--scope', 'root']);
    expect(scope).toMatchObject({ code: 2, stdout: '' });
    expect(scope.stderr).toContain('--scope must be sessions, host_direct or admin, got "root"');
    const tenant = await runA3s(cli, ['token', 'new', '--tenant', '../x']);
    expect(tenant.code).toBe(2);
    expect(tenant.stderr).toContain('--tenant must be');
    const bare = await runA3s(cli, ['token']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('missing "new"');
  });
});

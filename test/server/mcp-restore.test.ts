import { readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import type { McpServerConfigInput } from '../../src/protocol/mcp.js';
import { ECHO_SERVER, echoServerConfig } from '../mcp/mcp-test-helpers.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';

const HOST = 'token-mcp-restore-host-0001';
const PLAIN = 'token-mcp-restore-plain-001';
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
// The restarted server's callers: same tenant as the anonymous creator, one without host_direct.
const tokens = {
  apiTokens: [
    { token: HOST, principal: 'ci', tenantId: 'default', scopes: ['sessions', 'host_direct'] },
    { token: PLAIN, principal: 'web', tenantId: 'default', scopes: ['sessions'] },
  ],
};
const ENV_TOKEN = 'env-token-never-served-7f3a';
// Host-added stdio servers run unsandboxed here (the fixture and the node link live outside the workspace);
// test/server/sandbox-mcp.test.ts runs them in the sandbox.
const UNSANDBOXED = { sandbox: { hostDirect: 'none' } };

interface Status {
  name: string;
  source: string;
  connected: boolean;
  toolCount: number;
  error: string | null;
}

/** An echo server started through a symlink to node, so deleting the link makes its command disappear. */
function linkedEchoConfig(name: string, link: string): McpServerConfigInput {
  return { name, transport: { type: 'stdio', command: link, args: [ECHO_SERVER, `${name}-secret`] } };
}

describe('MCP servers come back when a stored session is restored', () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });

  it('reattaches inherited and own servers after a restart (resume: true and implicit hydration), drops removed ones and keeps unstartable ones with their error', async () => {
    const dataDir = tempDir('a3s-data-');
    const bin = tempDir('a3s-bin-');
    const link = join(bin, 'node-link');
    symlinkSync(process.execPath, link);

    // First server: anonymous loopback callers have every scope (stdio servers need host_direct).
    const t = await startTestServer({ dataDir, config: UNSANDBOXED });
    servers.push(t);
    await request(t.url)
      .post('/v1/sessions')
      .send({
        sessionId: 'inh',
        autoSave: true,
        mcpServers: [echoServerConfig('inh', 'inherited-secret'), linkedEchoConfig('inhbroken', link)],
      })
      .expect(201);
    await request(t.url).post('/v1/sessions').send({ sessionId: 'own', autoSave: true }).expect(201);
    await request(t.url)
      .post('/v1/sessions/own/mcp')
      .send({ ...echoServerConfig('own', 'own-secret'), env: { ECHO_TOKEN: ENV_TOKEN } })
      .expect(201);
    await request(t.url).post('/v1/sessions/own/mcp').send(linkedEchoConfig('ownbroken', link)).expect(201);
    await request(t.url).post('/v1/sessions/own/mcp').send(echoServerConfig('gone', 'gone-secret')).expect(201);
    await request(t.url).delete('/v1/sessions/own/mcp/gone').expect(200);

    // autoSave stored the own servers as soon as they changed (no shutdown needed): the removed one is not there.
    const stored = JSON.parse(readFileSync(join(dataDir, 'sessions', 'default', 'own.json'), 'utf8')) as {
      session: { ownMcpServers?: { name: string; env?: Record<string, string> }[] };
    };
    expect(stored.session.ownMcpServers?.map((s) => s.name)).toEqual(['own', 'ownbroken']);
    expect(stored.session.ownMcpServers?.[0]?.env).toEqual({ ECHO_TOKEN: ENV_TOKEN });
    await t.close();
    servers.splice(0);

    // The command of the "broken" servers no longer exists on the restarted node.
    rmSync(bin, { recursive: true, force: true });
    const t2 = await startTestServer({ dataDir, root: t.root, config: { ...tokens, ...UNSANDBOXED } });
    servers.push(t2);

    // resume: true by a caller without host_direct: the creator's authorisation stands.
    const resumed = await request(t2.url)
      .post('/v1/sessions')
      .set(auth(PLAIN))
      .send({ sessionId: 'own', resume: true })
      .expect(201);
    expect(resumed.body.resumed).toBe(true);
    const ownTools = (
      (await request(t2.url).get('/v1/sessions/own/tools').set(auth(PLAIN)).expect(200)).body.tools as {
        name: string;
      }[]
    ).map((x) => x.name);
    expect(ownTools).toEqual(expect.arrayContaining(['mcp__own__echo', 'mcp__own__get_secret']));
    expect(ownTools.some((name) => name.startsWith('mcp__gone__') || name.startsWith('mcp__ownbroken__'))).toBe(false);
    const hostCall = await request(t2.url)
      .post('/v1/sessions/own/tools/mcp__own__echo')
      .set(auth(HOST))
      .send({ args: { message: 'back again' } })
      .expect(200);
    expect(hostCall.body.output).toBe('back again');
    expect(
      (
        await request(t2.url)
          .post('/v1/sessions/own/tools/mcp__own__get_secret')
          .set(auth(HOST))
          .send({ args: {} })
          .expect(200)
      ).body.output,
    ).toBe('own-secret');
    const ownStatus = (await request(t2.url).get('/v1/sessions/own/mcp').set(auth(PLAIN)).expect(200)).body
      .servers as Status[];
    expect(ownStatus.filter((s) => s.source === 'session').map((s) => s.name)).toEqual(['own', 'ownbroken']);
    expect(ownStatus.find((s) => s.name === 'own')).toMatchObject({ connected: true, error: null });
    const broken = ownStatus.find((s) => s.name === 'ownbroken');
    expect(broken).toMatchObject({ connected: false, toolCount: 0 });
    expect(broken?.error).toContain('not found');

    // Implicit hydration by a plain GET, again by a caller without host_direct.
    await request(t2.url).get('/v1/sessions/inh').set(auth(PLAIN)).expect(200);
    const inhTools = (
      (await request(t2.url).get('/v1/sessions/inh/tools').set(auth(PLAIN)).expect(200)).body.tools as {
        name: string;
      }[]
    ).map((x) => x.name);
    expect(inhTools).toContain('mcp__inh__echo');
    const governed = await request(t2.url)
      .post('/v1/sessions/inh/tools/mcp__inh__echo/governed')
      .set(auth(PLAIN))
      .send({ args: { message: 'governed after restore' } })
      .expect(200);
    expect(governed.body.output).toBe('governed after restore');
    const inhStatus = (await request(t2.url).get('/v1/sessions/inh/mcp').set(auth(PLAIN)).expect(200)).body
      .servers as Status[];
    expect(inhStatus.find((s) => s.name === 'inh')).toMatchObject({
      source: 'inherited',
      connected: true,
      error: null,
    });
    expect(inhStatus.find((s) => s.name === 'inhbroken')).toMatchObject({
      source: 'inherited',
      toolCount: 0,
      error: expect.stringContaining('not found'),
    });
    // Inherited servers stay read-only after a restore.
    await request(t2.url).delete('/v1/sessions/inh/mcp/inh').set(auth(HOST)).expect(404);

    // The configs (env, args) are never served: not by session info, the MCP status or the tool list.
    for (const path of ['/v1/sessions/own', '/v1/sessions/own/mcp', '/v1/sessions/own/tools', '/v1/sessions']) {
      const body = JSON.stringify((await request(t2.url).get(path).set(auth(HOST)).expect(200)).body);
      expect(body).not.toContain(ENV_TOKEN);
      expect(body).not.toContain('own-secret');
    }

    // A session closed by a client keeps its own servers in the store: resume: true reopens it with them.
    await request(t2.url).delete('/v1/sessions/own').set(auth(HOST)).expect(200);
    await request(t2.url).post('/v1/sessions').set(auth(HOST)).send({ sessionId: 'own', resume: true }).expect(201);
    const reopened = (await request(t2.url).get('/v1/sessions/own/mcp').set(auth(HOST)).expect(200)).body
      .servers as Status[];
    expect(reopened.filter((s) => s.source === 'session').map((s) => s.name)).toEqual(['own', 'ownbroken']);
    expect(
      (
        await request(t2.url)
          .post('/v1/sessions/own/tools/mcp__own__echo')
          .set(auth(HOST))
          .send({ args: { message: 'reopened' } })
          .expect(200)
      ).body.output,
    ).toBe('reopened');

    // Removing the unstartable server takes it out of the store too.
    await request(t2.url).delete('/v1/sessions/own/mcp/ownbroken').set(auth(HOST)).expect(200);
    const after = JSON.parse(readFileSync(join(dataDir, 'sessions', 'default', 'own.json'), 'utf8')) as {
      session: { ownMcpServers?: { name: string }[] };
    };
    expect(after.session.ownMcpServers?.map((s) => s.name)).toEqual(['own']);
  });

  it('a snapshot without own servers (saved before they were stored) still loads and restores', async () => {
    const dataDir = tempDir('a3s-data-');
    const t = await startTestServer({ dataDir, config: UNSANDBOXED });
    servers.push(t);
    await request(t.url).post('/v1/sessions').send({ sessionId: 'plain', autoSave: true }).expect(201);
    await t.close();
    servers.splice(0);
    const file = join(dataDir, 'sessions', 'default', 'plain.json');
    expect((JSON.parse(readFileSync(file, 'utf8')) as { session: Record<string, unknown> }).session).not.toHaveProperty(
      'ownMcpServers',
    );
    const t2 = await startTestServer({ dataDir, root: t.root, config: UNSANDBOXED });
    servers.push(t2);
    await request(t2.url).post('/v1/sessions').send({ sessionId: 'plain', resume: true }).expect(201);
    const status = (await request(t2.url).get('/v1/sessions/plain/mcp').expect(200)).body.servers as Status[];
    expect(status).toEqual([]);
  });
});

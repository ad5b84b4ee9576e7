import { readFileSync } from 'node:fs';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoServerConfig, groupGone, processGone, waitFor } from '../mcp/mcp-test-helpers.js';
import { startHttpMcpServer, type TestHttpMcpServer } from '../mcp/http-mcp-server.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const HOST = 'token-mcp-host-direct-000001';
const PLAIN = 'token-mcp-sessions-only-0001';
const ADMIN = 'token-mcp-admin-scope-000001';
const auth = (token: string) => ({ authorization: `Bearer ${token}` });

function processGroupOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

describe('MCP servers over HTTP: layers, process lifetime, model and host calls', () => {
  let t: TestServer;
  let http: TestHttpMcpServer;
  beforeAll(async () => {
    http = await startHttpMcpServer('http-secret');
    const global = echoServerConfig('echo', 'global-secret');
    t = await startTestServer({
      config: {
        // These tests are about MCP layers: host-added stdio servers run unsandboxed here (the fixture lives
        // outside the workspace); test/server/sandbox-mcp.test.ts runs them in the sandbox.
        sandbox: { hostDirect: 'none' },
        mcpServers: [global],
        apiTokens: [
          { token: HOST, principal: 'ci', tenantId: 'acme', scopes: ['sessions', 'host_direct'] },
          { token: PLAIN, principal: 'web', tenantId: 'acme', scopes: ['sessions'] },
          { token: ADMIN, principal: 'ops', tenantId: 'ops', scopes: ['admin'] },
        ],
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await http.close();
  });

  const newSession = async () =>
    (await request(t.url).post('/v1/sessions').set(auth(HOST)).send({}).expect(201)).body.session.id as string;
  const call = async (id: string, tool: string, args: Record<string, unknown> = {}) =>
    (await request(t.url).post(`/v1/sessions/${id}/tools/${tool}`).set(auth(HOST)).send({ args }).expect(200)).body as {
      output: string;
      exitCode: number;
    };

  it('adds a stdio server, lists its tools as given, lets the model and the host call them, shadows and reveals across layers, and kills the process group on remove', async () => {
    const a = await newSession();
    const b = await newSession();
    // The global server is visible to every session.
    expect((await call(a, 'mcp__echo__get_secret')).output).toBe('global-secret');

    const added = await request(t.url)
      .post(`/v1/sessions/${a}/mcp`)
      .set(auth(HOST))
      .send(echoServerConfig('echo', 'session-secret'))
      .expect(201);
    expect(added.body).toEqual({ name: 'echo', toolCount: expect.any(Number) });
    const tools = (await request(t.url).get(`/v1/sessions/${a}/tools`).set(auth(HOST)).expect(200)).body.tools as {
      name: string;
      parameters: Record<string, unknown>;
    }[];
    const echo = tools.find((x) => x.name === 'mcp__echo__echo');
    expect(echo?.parameters).toMatchObject({
      type: 'object',
      properties: { message: { type: 'string' } },
      required: ['message'],
    });
    const servers = (await request(t.url).get(`/v1/sessions/${a}/mcp`).set(auth(HOST)).expect(200)).body.servers;
    expect(servers).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'echo', source: 'global', connected: true }),
        expect.objectContaining({ name: 'echo', source: 'session', connected: true }),
      ]),
    );

    // Shadowing: the session's own server wins in that session only.
    expect((await call(a, 'mcp__echo__get_secret')).output).toBe('session-secret');
    expect((await call(b, 'mcp__echo__get_secret')).output).toBe('global-secret');
    // Sibling isolation: b cannot remove a's server.
    await request(t.url).delete(`/v1/sessions/${b}/mcp/echo`).set(auth(HOST)).expect(404);

    // The model calls the MCP tool in a run, through the tool invoker.
    t.fake.script(
      { toolCalls: [{ id: 'm1', name: 'mcp__echo__echo', arguments: { message: 'hello from the model' } }] },
      { text: 'echoed' },
    );
    const run = await request(t.url)
      .post(`/v1/sessions/${a}/runs`)
      .set(auth(HOST))
      .send({ input: 'echo', wait: true })
      .expect(200);
    expect(run.body.result.toolCallsCount).toBe(1);
    const offered = (t.fake.requests.at(-2)?.body.tools ?? []) as { function: { name: string } }[];
    expect(offered.map((x) => x.function.name)).toContain('mcp__echo__echo');
    const toolMessage = (t.fake.requests.at(-1)?.body.messages ?? []).find((m) => m.role === 'tool');
    expect(toolMessage?.content).toBe('hello from the model');

    // Remove the local server: its whole process group goes, and the global tools are revealed again.
    const child = Number((await call(a, 'mcp__echo__spawn_child')).output);
    const pgid = processGroupOf(child);
    await request(t.url).delete(`/v1/sessions/${a}/mcp/echo`).set(auth(HOST)).expect(200);
    expect(await waitFor(() => groupGone(pgid), 5000)).toBe(true);
    expect(await waitFor(() => processGone(child), 5000)).toBe(true);
    expect((await call(a, 'mcp__echo__get_secret')).output).toBe('global-secret');
    t.fake.assertDone();
  });

  it('stdio servers need host_direct; http servers need sessions, and a loopback URL needs the right to call private addresses', async () => {
    const id = (await request(t.url).post('/v1/sessions').set(auth(PLAIN)).send({}).expect(201)).body.session.id;
    const denied = await request(t.url)
      .post(`/v1/sessions/${id}/mcp`)
      .set(auth(PLAIN))
      .send(echoServerConfig('local'))
      .expect(403);
    expect(denied.body.error.details.scope).toBe('host_direct');
    // The test server listens on 127.0.0.1: server-side request forgery for a sessions-only caller, in every spelling.
    const port = new URL(http.url).port;
    for (const url of [
      http.url,
      `http://localhost:${port}/mcp`,
      `http://2130706433:${port}/mcp`,
      `http://[::ffff:127.0.0.1]:${port}/mcp`,
      'http://169.254.169.254/latest/meta-data',
    ]) {
      const refused = await request(t.url)
        .post(`/v1/sessions/${id}/mcp`)
        .set(auth(PLAIN))
        .send({ name: 'web', transport: { type: 'streamable-http', url } })
        .expect(400);
      expect(refused.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { field: 'transport.url', refusal: 'private_address' },
      });
    }
    expect(
      (await request(t.url).get(`/v1/sessions/${id}/mcp`).set(auth(PLAIN)).expect(200)).body.servers.map(
        (s: { name: string }) => s.name,
      ),
    ).not.toContain('web');
    const asOption = await request(t.url)
      .post('/v1/sessions')
      .set(auth(PLAIN))
      .send({ mcpServers: [{ name: 'web', transport: { type: 'sse', url: http.url } }] })
      .expect(400);
    expect(asOption.body.error.details).toMatchObject({
      field: 'mcpServers[0].transport.url',
      refusal: 'private_address',
    });
    // A host_direct caller may name it, in a session whose creator may too.
    const hostSession = (await request(t.url).post('/v1/sessions').set(auth(HOST)).send({}).expect(201)).body.session
      .id;
    const ok = await request(t.url)
      .post(`/v1/sessions/${hostSession}/mcp`)
      .set(auth(HOST))
      .send({ name: 'web', transport: { type: 'streamable-http', url: http.url } })
      .expect(201);
    expect(ok.body.toolCount).toBeGreaterThan(0);
    // A sessions-only caller cannot use that session's right to add a private URL of its own choosing.
    await request(t.url)
      .post(`/v1/sessions/${hostSession}/mcp`)
      .set(auth(PLAIN))
      .send({ name: 'web2', transport: { type: 'streamable-http', url: http.url } })
      .expect(400);
    const inherited = await request(t.url)
      .post('/v1/sessions')
      .set(auth(PLAIN))
      .send({ mcpServers: [echoServerConfig('inh')] })
      .expect(403);
    expect(inherited.body.error.details.field).toBe('mcpServers');
    const bad = await request(t.url)
      .post(`/v1/sessions/${id}/mcp`)
      .set(auth(PLAIN))
      .send({ name: 'a__b', transport: { type: 'stdio', command: 'x' } })
      .expect(400);
    expect(bad.body.error.message).toContain('body.name');
  });

  it('streamable HTTP: add, call from the host, remove', async () => {
    const id = await newSession();
    await request(t.url)
      .post(`/v1/sessions/${id}/mcp`)
      .set(auth(HOST))
      .send({ name: 'web', transport: { type: 'streamable-http', url: http.url } })
      .expect(201);
    expect((await call(id, 'mcp__web__get_secret')).output).toBe('http-secret');
    expect((await call(id, 'mcp__web__echo', { message: 'over http' })).output).toBe('over http');
    await request(t.url).delete(`/v1/sessions/${id}/mcp/web`).set(auth(HOST)).expect(200);
    const gone = await request(t.url)
      .post(`/v1/sessions/${id}/tools/mcp__web__echo`)
      .set(auth(HOST))
      .send({ args: { message: 'x' } })
      .expect(404);
    expect(gone.body.error.code).toBe('TOOL_NOT_FOUND');
  });

  it('host-supplied servers form a read-only inherited layer', async () => {
    const id = (
      await request(t.url)
        .post('/v1/sessions')
        .set(auth(HOST))
        .send({ mcpServers: [echoServerConfig('inh', 'inherited-secret')] })
        .expect(201)
    ).body.session.id;
    expect((await call(id, 'mcp__inh__get_secret')).output).toBe('inherited-secret');
    const servers = (await request(t.url).get(`/v1/sessions/${id}/mcp`).set(auth(HOST)).expect(200)).body.servers;
    expect(servers).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'inh', source: 'inherited' })]));
    await request(t.url).delete(`/v1/sessions/${id}/mcp/inh`).set(auth(HOST)).expect(404);
    await request(t.url).delete(`/v1/sessions/${id}`).set(auth(HOST)).expect(200);
  });

  it('a server that crashes mid-call fails that call with a clear tool error and the session stays usable', async () => {
    const id = await newSession();
    await request(t.url)
      .post(`/v1/sessions/${id}/mcp`)
      .set(auth(HOST))
      .send(echoServerConfig('crashy', 'x', 20_000))
      .expect(201);
    const started = Date.now();
    const crashed = await call(id, 'mcp__crashy__crash');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(crashed.exitCode).toBe(1);
    expect(crashed.output).toContain('crashy');
    expect((await call(id, 'read', { file_path: 'nothing.txt' })).exitCode).toBe(1);
    expect((await call(id, 'mcp__crashy__echo', { message: 'back' })).output).toBe('back');
  });

  it('admin: disconnect idle servers (configuration kept, the next call reconnects) and refresh global tools', async () => {
    const id = await newSession();
    await request(t.url).post(`/v1/sessions/${id}/mcp`).set(auth(HOST)).send(echoServerConfig('idle')).expect(201);
    await request(t.url).post('/v1/admin/mcp/disconnect-idle').set(auth(HOST)).send({ thresholdMs: 0 }).expect(403);
    const result = await request(t.url)
      .post('/v1/admin/mcp/disconnect-idle')
      .set(auth(ADMIN))
      .send({ thresholdMs: 0 })
      .expect(200);
    expect(result.body.disconnected).toEqual(expect.arrayContaining(['echo', `${id}/idle`]));
    const servers = (await request(t.url).get(`/v1/sessions/${id}/mcp`).set(auth(HOST)).expect(200)).body.servers;
    expect(servers.find((s: { name: string; source: string }) => s.name === 'idle')).toMatchObject({
      connected: false,
    });
    expect((await call(id, 'mcp__idle__echo', { message: 'again' })).output).toBe('again');
    const refreshed = await request(t.url).post('/v1/admin/mcp/refresh').set(auth(ADMIN)).send({}).expect(200);
    expect(refreshed.body.servers).toEqual([expect.objectContaining({ name: 'echo', source: 'global' })]);
  });
});

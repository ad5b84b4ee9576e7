import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A3sClient, SessionOwnedElsewhereError, type HostReconnectInfo } from '../../src/client/index.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { redisServerConfig, startRedisNodes } from '../support/redis-target.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const TOKEN = 'tenant-a-client-cluster-token-0123456789';

/** A fetch that records each request's URL and answer status. */
function recordingFetch(): { fetch: typeof fetch; calls: { url: string; status: number; route: string | null }[] } {
  const calls: { url: string; status: number; route: string | null }[] = [];
  return {
    calls,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      const headers = new Headers(init?.headers);
      calls.push({ url: String(input), status: response.status, route: headers.get('a3s-route') });
      return response;
    },
  };
}

describe('two nodes on one Redis: the typed client across nodes', () => {
  let fake: FakeProvider;
  let a: TestServer;
  let b: TestServer;
  // A third node without peer URLs: it cannot forward, so it answers 421 (REST) and refuses host_register (WebSocket).
  let c: TestServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    const apiTokens = [{ token: TOKEN, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] }];
    [a, b] = await startRedisNodes(fake, 'a3s-client-cluster', { apiTokens });
    c = await startTestServer({
      fake,
      config: {
        ...redisServerConfig(),
        redisKeyPrefix: a.config.redisKeyPrefix,
        apiTokens,
        nodeId: 'node-c',
        cluster: { peerUrls: [] },
      },
    });
  });
  afterAll(async () => {
    await c?.close();
    await b?.close();
    await a?.close();
    await fake?.close();
  });

  it('a host registered through B (proxied to the owner A) registers again after A closes its sockets with 1012; the run still asks its hook', async () => {
    const owner = new A3sClient({ baseUrl: a.url, token: TOKEN, WebSocket });
    const created = await owner.session(undefined, { sessionId: 'host-on-b' });
    const infos: HostReconnectInfo[] = [];
    let registered: (id: string) => void = () => undefined;
    const again = new Promise<string>((resolve) => (registered = resolve));
    const viaB = new A3sClient({
      baseUrl: b.url,
      token: TOKEN,
      WebSocket,
      hostReconnect: {
        initialDelayMs: 50,
        onReconnect: (info) => {
          infos.push(info);
          if (info.connectionId !== undefined) registered(info.connectionId);
        },
      },
    });
    const session = await viaB.getSession(created.sessionId);
    const asked: string[] = [];
    await session.registerHook('gate-writes', 'pre_tool_use', { tool: 'write' }, { timeoutMs: 3000 }, (payload) => {
      asked.push(String(payload.tool));
      return { action: 'block', reason: 'held by the client on B' };
    });
    a.server.sockets.closeAll('owner restarting', 1012);
    const connectionId = await again;
    expect(infos[0]).toMatchObject({ code: 1012, connectionId, final: false });
    // The owner's registry holds the new connection: the hook names it, connected.
    expect((await session.hooks())[0]).toMatchObject({
      id: 'gate-writes',
      endpoint: { connectionId, connected: true },
    });
    expect(a.server.ctx.hostRegistry.has(connectionId)).toBe(true);
    fake.script(
      { toolCalls: [{ id: 'w1', name: 'write', arguments: { file_path: 'x.txt', content: 'x' } }] },
      { text: 'blocked, done' },
    );
    expect((await session.send('write x.txt')).text).toBe('blocked, done');
    expect(asked).toEqual(['write']);
    session.disconnectHost();
  });

  it("route 'no-forward': B answers 421 naming A, the client sends the request once more to A with its token", async () => {
    const owner = new A3sClient({ baseUrl: a.url, token: TOKEN, WebSocket });
    await owner.session(undefined, { sessionId: 'no-forward' });
    // B refuses to forward when asked not to (what the client meets).
    const refused = await request(b.url)
      .get('/v1/sessions/no-forward')
      .set({ authorization: `Bearer ${TOKEN}`, 'a3s-route': 'no-forward' })
      .expect(421);
    expect(refused.body.error).toMatchObject({ code: 'SESSION_OWNED_ELSEWHERE', details: { ownerUrl: a.url } });

    const recorded = recordingFetch();
    const client = new A3sClient({
      baseUrl: b.url,
      token: TOKEN,
      WebSocket,
      route: 'no-forward',
      fetch: recorded.fetch,
    });
    const session = await client.getSession('no-forward');
    expect(session.sessionId).toBe('no-forward');
    expect(recorded.calls).toEqual([
      { url: `${b.url}/v1/sessions/no-forward`, status: 421, route: 'no-forward' },
      { url: `${a.url}/v1/sessions/no-forward`, status: 200, route: 'no-forward' },
    ]);
    fake.script({ text: 'answered by A' });
    expect((await session.send('hi')).text).toBe('answered by A');
    expect(recorded.calls.slice(2).map((call) => [new URL(call.url).origin, call.status])).toEqual([
      [b.url, 421],
      [a.url, 200],
    ]);

    // Without the option B forwards: the client only ever talks to B.
    const forwarded = recordingFetch();
    const plain = new A3sClient({ baseUrl: b.url, token: TOKEN, WebSocket, fetch: forwarded.fetch });
    await plain.getSession('no-forward');
    expect(forwarded.calls).toEqual([{ url: `${b.url}/v1/sessions/no-forward`, status: 200, route: null }]);
  });

  it("route 'no-forward' on a node that cannot forward: the host socket opens at the owner and its hook gates the run", async () => {
    const owner = new A3sClient({ baseUrl: a.url, token: TOKEN, WebSocket });
    await owner.session(undefined, { sessionId: 'host-no-forward' });
    // Without the option the node refuses host registration: it only follows the session's events.
    const plain = await new A3sClient({ baseUrl: c.url, token: TOKEN, WebSocket })
      .getSession('host-no-forward')
      .catch((e: unknown) => e);
    expect(plain).toBeInstanceOf(SessionOwnedElsewhereError);
    const client = new A3sClient({ baseUrl: c.url, token: TOKEN, WebSocket, route: 'no-forward' });
    const session = await client.getSession('host-no-forward');
    const asked: string[] = [];
    const hook = await session.registerHook(
      'gate',
      'pre_tool_use',
      { tool: 'write' },
      { timeoutMs: 3000 },
      (payload) => {
        asked.push(String(payload.tool));
        return { action: 'block', reason: 'not here' };
      },
    );
    const connectionId = (hook.endpoint as { connectionId: string }).connectionId;
    expect(a.server.ctx.hostRegistry.has(connectionId)).toBe(true);
    expect(c.server.ctx.hostRegistry.has(connectionId)).toBe(false);
    fake.script(
      { toolCalls: [{ id: 'w1', name: 'write', arguments: { file_path: 'y.txt', content: 'y' } }] },
      { text: 'did not write' },
    );
    expect((await session.send('write y.txt')).text).toBe('did not write');
    expect(asked).toEqual(['write']);
    session.disconnectHost();
  });
});

/** A server that answers every request with 421 naming `owner()`; counts requests. */
async function ownedElsewhere(owner: () => string): Promise<{ url: string; hits: number; server: Server }> {
  const state = {
    url: '',
    hits: 0,
    server: createServer((req, res) => {
      state.hits += 1;
      res.writeHead(421, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: {
            code: 'SESSION_OWNED_ELSEWHERE',
            message: 'owned elsewhere',
            details: { sessionId: 's', ownerNodeId: 'n', ownerUrl: owner() },
          },
        }),
      );
    }),
  };
  await new Promise<void>((resolve) => state.server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}`;
  return state;
}

describe("route 'no-forward' follows a 421 at most once, and only to http(s)", () => {
  const servers: Server[] = [];
  afterAll(async () => {
    for (const server of servers) await new Promise((resolve) => server.close(resolve));
  });

  it('an owner that answers 421 again is not followed further: the error is the owner’s', async () => {
    let second = '';
    const first = await ownedElsewhere(() => second);
    const next = await ownedElsewhere(() => first.url);
    second = next.url;
    servers.push(first.server, next.server);
    const recorded = recordingFetch();
    const client = new A3sClient({ baseUrl: first.url, token: 't', route: 'no-forward', fetch: recorded.fetch });
    const error = await client.getSession('s').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionOwnedElsewhereError);
    expect((error as SessionOwnedElsewhereError).details.ownerUrl).toBe(first.url);
    // (fetch itself may retry a 421 once on a new connection to the same server: the calls are the client's.)
    expect(recorded.calls.map((call) => [new URL(call.url).origin, call.status])).toEqual([
      [first.url, 421],
      [next.url, 421],
    ]);
  });

  it('an owner URL that is not http(s) is not followed', async () => {
    const only = await ownedElsewhere(() => 'file:///etc/passwd');
    servers.push(only.server);
    const recorded = recordingFetch();
    const client = new A3sClient({ baseUrl: only.url, route: 'no-forward', fetch: recorded.fetch });
    await expect(client.getSession('s')).rejects.toBeInstanceOf(SessionOwnedElsewhereError);
    expect(recorded.calls.map((call) => call.url)).toEqual([`${only.url}/v1/sessions/s`]);
  });

  it('without the option a 421 is not followed; an unknown route is refused by name', async () => {
    const owner = await ownedElsewhere(() => 'http://127.0.0.1:9');
    const elsewhere = await ownedElsewhere(() => owner.url);
    servers.push(owner.server, elsewhere.server);
    await expect(new A3sClient({ baseUrl: elsewhere.url }).getSession('s')).rejects.toBeInstanceOf(
      SessionOwnedElsewhereError,
    );
    expect(elsewhere.hits).toBeGreaterThan(0);
    expect(owner.hits).toBe(0);
    expect(() => new A3sClient({ baseUrl: elsewhere.url, route: 'sideways' as never })).toThrow(
      /options\.route: must be "forward" or "no-forward"/,
    );
  });
});

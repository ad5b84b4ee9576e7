import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { A3sClient, type AgentEvent, type HostReconnectInfo } from '../../src/client/index.js';
import { useTestServers } from '../support/run-helpers.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

/** Reconnect reports, and the first re-registered connection id. */
function reconnectWatch(): {
  infos: HostReconnectInfo[];
  registered: Promise<string>;
  onReconnect: (info: HostReconnectInfo) => void;
} {
  const infos: HostReconnectInfo[] = [];
  let resolve: (id: string) => void = () => undefined;
  const registered = new Promise<string>((r) => (resolve = r));
  return {
    infos,
    registered,
    onReconnect: (info) => {
      infos.push(info);
      if (info.connectionId !== undefined) resolve(info.connectionId);
    },
  };
}

describe('after its socket reconnects the client registers its hooks, commands and budget guard again', () => {
  const start = useTestServers();

  it('the server closes every socket with 1012: the host re-registers, a run goes through its hook, the event stream resumes exactly once', async () => {
    const t = await start({ files: { 'a.txt': 'alpha\n' } });
    const watch = reconnectWatch();
    const client = new A3sClient({
      baseUrl: t.url,
      WebSocket,
      hostReconnect: { initialDelayMs: 50, onReconnect: watch.onReconnect },
    });
    const session = await client.session(t.root);
    const asked: Record<string, unknown>[] = [];
    const before = await session.registerHook(
      'no-writes',
      'pre_tool_use',
      { tool: 'write' },
      { timeoutMs: 3000 },
      (payload) => {
        asked.push(payload);
        return { action: 'block', reason: 'read-only today' };
      },
    );
    await session.registerCommand('status', 'Say the status', (args) => `status ${args}`);
    const checked: string[] = [];
    await session.setBudgetGuard({
      checkBeforeTool: (ctx) => {
        checked.push(ctx.toolName);
        return null;
      },
    });
    const streamCloses: number[] = [];
    const stream = session.events({
      after: 0,
      reconnect: { initialDelayMs: 50 },
      onReconnect: (info) => streamCloses.push(info.code),
    });
    t.fake.script({ text: 'first' });
    expect((await session.send('one')).text).toBe('first');

    t.server.sockets.closeAll('test: service restart', 1012);
    const connectionId = await watch.registered;
    expect(watch.infos[0]).toMatchObject({ code: 1012, attempt: 1, connectionId, final: false });
    expect(before.endpoint).toMatchObject({ type: 'websocket' });
    expect(connectionId).not.toBe((before.endpoint as { connectionId: string }).connectionId);
    // The same hook, replaced (not doubled), now naming the new socket.
    const hooks = await session.hooks();
    expect(hooks).toHaveLength(1);
    expect(hooks[0]).toMatchObject({ id: 'no-writes', endpoint: { type: 'websocket', connectionId, connected: true } });
    expect((await session.listCommands()).find((c) => c.name === 'status')).toMatchObject({
      kind: 'websocket',
      source: 'session',
    });

    // A run's tool calls go through the client's hook and budget guard on the new socket.
    t.fake.script(
      {
        toolCalls: [
          { id: 'r1', name: 'read', arguments: { file_path: 'a.txt' } },
          { id: 'w1', name: 'write', arguments: { file_path: 'c.txt', content: 'c' } },
        ],
      },
      { text: 'gave up' },
    );
    expect((await session.send('read then write')).text).toBe('gave up');
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ tool: 'write', hook_id: 'no-writes', args: { file_path: 'c.txt' } });
    expect(checked).toContain('read');
    expect(JSON.stringify(t.fake.requests[2].body.messages)).toContain('read-only today');
    expect((await session.send('/status ok')).text).toBe('status ok');

    // The events socket was closed with 1012 too; it resumed from its cursor: every event once, in order.
    const events: AgentEvent[] = [];
    let ends = 0;
    for (let event = await stream.nextEvent(); event !== null; event = await stream.nextEvent()) {
      events.push(event);
      if (event.type === 'agent_end' && ++ends === 3) break;
    }
    await stream.close();
    expect(streamCloses).toContain(1012);
    const sequences = events.map((e) => Number(e.metadata.session_sequence));
    expect(sequences).toEqual(Array.from({ length: sequences.length }, (_, i) => i + 1));
    t.fake.assertDone();
  });

  it('a dropped network (1006) with failed attempts while it is down: the host re-registers once the server is reachable', async () => {
    const t = await start({ files: { 'a.txt': 'alpha\n' } });
    const proxy = await startTcpProxy(t.url.replace(/^http:/, 'redis:'));
    try {
      const watch = reconnectWatch();
      const client = new A3sClient({
        baseUrl: proxy.url.replace(/^redis:/, 'http:'),
        WebSocket,
        hostReconnect: { initialDelayMs: 50, maxDelayMs: 200, onReconnect: watch.onReconnect },
      });
      const session = await client.session(t.root);
      const asked: string[] = [];
      await session.registerHook('reads', 'pre_tool_use', { tool: 'read' }, { timeoutMs: 3000 }, (payload) => {
        asked.push(String(payload.tool));
        return { action: 'block', reason: 'no reads' };
      });
      proxy.cut('reset');
      setTimeout(() => proxy.restore(), 400);
      const connectionId = await watch.registered;
      expect(watch.infos[0]).toMatchObject({ code: 1006, attempt: 1, final: false });
      // Attempts while the link was down failed (reported, not final); the last one registered.
      expect(watch.infos.slice(0, -1).every((info) => info.error !== undefined && !info.final)).toBe(true);
      expect(watch.infos.at(-1)).toMatchObject({ connectionId, final: false });
      const direct = await new A3sClient({ baseUrl: t.url, WebSocket }).getSession(session.sessionId);
      expect(await direct.hooks()).toEqual([
        expect.objectContaining({ id: 'reads', endpoint: { type: 'websocket', connectionId, connected: true } }),
      ]);
      // A blocked read is a failed result: readFile answers its text (as the seed), tool() its exit code.
      expect(await direct.readFile('a.txt')).toContain('no reads');
      expect(await direct.tool('read', { file_path: 'a.txt' })).toMatchObject({ exitCode: 1 });
      expect(asked).toEqual(['read', 'read']);
      session.disconnectHost();
    } finally {
      await proxy.close();
    }
  });

  it('disconnectHost() stops it: a closed host is not reopened, its gating hook blocks', async () => {
    const t = await start({ files: { 'a.txt': 'alpha\n' } });
    const watch = reconnectWatch();
    const client = new A3sClient({
      baseUrl: t.url,
      WebSocket,
      hostReconnect: { initialDelayMs: 20, onReconnect: watch.onReconnect },
    });
    const session = await client.session(t.root);
    await session.registerHook('reads', 'pre_tool_use', { tool: 'read' }, { timeoutMs: 2000 }, () => ({
      action: 'continue',
    }));
    expect(await session.readFile('a.txt')).toContain('alpha');
    session.disconnectHost();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(watch.infos).toEqual([]);
    expect((await session.hooks())[0]).toMatchObject({ endpoint: { connected: false } });
    expect(await session.tool('read', { file_path: 'a.txt' })).toMatchObject({ exitCode: 1 });
  });

  it('a session that is gone ends the reconnects with one final report', async () => {
    const t = await start();
    const infos: HostReconnectInfo[] = [];
    let final: (info: HostReconnectInfo) => void = () => undefined;
    const ended = new Promise<HostReconnectInfo>((resolve) => (final = resolve));
    const client = new A3sClient({
      baseUrl: t.url,
      WebSocket,
      hostReconnect: {
        initialDelayMs: 20,
        onReconnect: (info) => {
          infos.push(info);
          if (info.final) final(info);
        },
      },
    });
    const session = await client.session(t.root);
    await session.registerHook('h', 'pre_tool_use', null, null, () => ({ action: 'continue' }));
    await client.closeSession(session.sessionId);
    const info = await ended;
    expect(info.final).toBe(true);
    expect(info.connectionId).toBeUndefined();
    expect(infos.filter((i) => i.final)).toHaveLength(1);
  });
});

import { client, type SessionUpdate } from '@agentclientprotocol/sdk';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startRedisNodes } from '../support/redis-target.js';
import type { TestServer } from '../support/test-server.js';

const TOKEN = 'tenant-a-acp-forwarding-token-012345';
const OTHER = 'tenant-b-acp-forwarding-token-012345';
const auth = { authorization: `Bearer ${TOKEN}` };
const ASK_BASH = {
  permissionPolicy: { ask: ['bash'], defaultDecision: 'allow' },
  confirmationPolicy: { enabled: true, defaultTimeoutMs: 20_000, timeoutAction: 'reject' },
};
const wsUrl = (url: string) => `${url.replace(/^http/, 'ws')}/acp`;

/** What an editor connected to one node saw. */
interface EditorSession {
  updates: SessionUpdate[];
  asked: string[];
}

describe('ACP on a node that does not own the session: its calls are served by the owner', () => {
  let fake: FakeProvider;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    [a, b] = await startRedisNodes(fake, 'a3s-acp-fwd', {
      apiTokens: [
        { token: TOKEN, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
        { token: OTHER, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
      ],
    });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await fake?.close();
  });

  it('session/load, session/prompt with a permission request, session/cancel and session/set_mode through B act on the session on A', async () => {
    await request(a.url)
      .post('/v1/sessions')
      .set(auth)
      .send({ sessionId: 'acp-owned-by-a', ...ASK_BASH })
      .expect(201);
    fake.script({ text: 'first answer on A' });
    await request(a.url)
      .post('/v1/sessions/acp-owned-by-a/runs')
      .set(auth)
      .send({ input: 'hello', wait: true })
      .expect(200);

    const seen: EditorSession = { updates: [], asked: [] };
    const editor = client({ name: 'editor-on-b' })
      .onNotification('session/update', ({ params }) => {
        expect(params.sessionId).toBe('acp-owned-by-a');
        seen.updates.push(params.update);
      })
      .onRequest('session/request_permission', ({ params }) => {
        seen.asked.push(params.toolCall.toolCallId);
        // The tool call was relayed before the question about it.
        expect(
          seen.updates.some((u) => u.sessionUpdate === 'tool_call' && u.toolCallId === params.toolCall.toolCallId),
        ).toBe(true);
        return {
          outcome: {
            outcome: 'selected',
            optionId: params.options.find((o) => o.kind === 'allow_once')?.optionId ?? 'none',
          },
        };
      });
    await editor.connectWith(createWebSocketStream(wsUrl(b.url), { WebSocket, headers: auth }), async (ctx) => {
      await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
      const loaded = await ctx.request('session/load', { sessionId: 'acp-owned-by-a', cwd: a.root, mcpServers: [] });
      expect(loaded?.modes?.currentModeId).toBe('general');
      const history = seen.updates.flatMap((u) =>
        u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' ? [u.content.text] : [],
      );
      expect(history.join('')).toBe('first answer on A');

      seen.updates.length = 0;
      fake.script(
        { toolCalls: [{ id: 'acp_call_1', name: 'bash', arguments: { command: 'echo relayed-through-b' } }] },
        { text: 'ran it', chunks: 2 },
      );
      const answered = await ctx.request('session/prompt', {
        sessionId: 'acp-owned-by-a',
        prompt: [{ type: 'text', text: 'run it' }],
      });
      expect(answered.stopReason).toBe('end_turn');
      expect(seen.asked).toEqual(['acp_call_1']);
      const completed = seen.updates.find((u) => u.sessionUpdate === 'tool_call_update' && u.status === 'completed');
      expect(JSON.stringify(completed)).toContain('relayed-through-b');
      // Every update of the run came before the answer.
      const text = seen.updates.flatMap((u) =>
        u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' ? [u.content.text] : [],
      );
      expect(text.join('')).toBe('ran it');

      // The run really happened on A: its history there has it.
      const onA = await request(a.url)
        .get('/v1/sessions/acp-owned-by-a/history')
        .set(auth)
        .set('a3s-route', 'no-forward')
        .expect(200);
      expect(JSON.stringify(onA.body)).toContain('relayed-through-b');

      const requestsBefore = fake.requests.length;
      fake.script({ hang: true });
      const pending = ctx.request('session/prompt', {
        sessionId: 'acp-owned-by-a',
        prompt: [{ type: 'text', text: 'hang' }],
      });
      await fake.waitForRequests(requestsBefore + 1);
      await ctx.notify('session/cancel', { sessionId: 'acp-owned-by-a' });
      expect((await pending).stopReason).toBe('cancelled');

      // set_mode is answered by the owner with the owner's rule (the agent is fixed once the session ran).
      await expect(
        ctx.request('session/set_mode', { sessionId: 'acp-owned-by-a', modeId: 'explore' }),
      ).rejects.toMatchObject({ data: { error: { code: 'SESSION_CONFIGURATION_ERROR' } } });
    });
  });

  it('the owner checks the editor again: another tenant through B finds no session, and no-forward keeps the 421 shape', async () => {
    await request(a.url).post('/v1/sessions').set(auth).send({ sessionId: 'acp-private' }).expect(201);
    const foreign = client({ name: 'other-tenant' });
    await foreign.connectWith(
      createWebSocketStream(wsUrl(b.url), { WebSocket, headers: { authorization: `Bearer ${OTHER}` } }),
      async (ctx) => {
        await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
        await expect(
          ctx.request('session/load', { sessionId: 'acp-private', cwd: a.root, mcpServers: [] }),
        ).rejects.toMatchObject({ code: -32002, data: { error: { code: 'SESSION_NOT_FOUND' } } });
      },
    );
    const pinned = client({ name: 'no-forward' });
    await pinned.connectWith(
      createWebSocketStream(wsUrl(b.url), { WebSocket, headers: { ...auth, 'a3s-route': 'no-forward' } }),
      async (ctx) => {
        await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
        const refused = ctx.request('session/load', { sessionId: 'acp-private', cwd: a.root, mcpServers: [] });
        await expect(refused).rejects.toMatchObject({
          data: { error: { code: 'SESSION_OWNED_ELSEWHERE', details: { ownerNodeId: 'node-a' } } },
        });
      },
    );
  });

  it('an editor that authenticates with a first frame is authenticated at the owner with the same token', async () => {
    await request(a.url).post('/v1/sessions').set(auth).send({ sessionId: 'acp-frame-auth' }).expect(201);
    fake.script({ text: 'frame auth works' });
    await request(a.url)
      .post('/v1/sessions/acp-frame-auth/runs')
      .set(auth)
      .send({ input: 'hi', wait: true })
      .expect(200);
    const socket = new WebSocket(wsUrl(b.url));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(JSON.stringify({ type: 'auth', token: TOKEN }));
    const frames: Array<{
      id?: number;
      method?: string;
      result?: unknown;
      error?: unknown;
      params?: { update?: SessionUpdate };
    }> = [];
    socket.on('message', (data) => frames.push(JSON.parse(data.toString())));
    const answer = async (id: number) => {
      for (let i = 0; i < 500; i++) {
        const found = frames.find((f) => f.id === id && (f.result !== undefined || f.error !== undefined));
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`no answer to ${id}`);
    };
    socket.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: 1, clientCapabilities: {} },
      }),
    );
    await answer(1);
    socket.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'session/load',
        params: { sessionId: 'acp-frame-auth', cwd: a.root, mcpServers: [] },
      }),
    );
    const loaded = await answer(2);
    expect(loaded.error).toBeUndefined();
    expect(JSON.stringify(frames.filter((f) => f.method === 'session/update'))).toContain('frame auth works');
    socket.close();
  });
});

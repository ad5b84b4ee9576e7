import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { eventually, useTestServers } from '../support/run-helpers.js';
import { ACP_SCENARIO_CONFIG, expectScenarioHistory, loadAcpSession, runAcpScenario } from './acp-scenario.js';

const wsUrl = (httpUrl: string) => `${httpUrl.replace(/^http/, 'ws')}/acp`;

describe('ACP over the /acp WebSocket, driven by the ACP SDK client', () => {
  const start = useTestServers();

  it('initialize, session/new, a prompt with a tool call and an "allow always" permission, cancel, list, load', async () => {
    const t = await start({ config: ACP_SCENARIO_CONFIG });
    const { sessionId } = await runAcpScenario(t, createWebSocketStream(wsUrl(t.url), { WebSocket }));
    t.fake.assertDone();
    // The same session over REST: the run is the kernel's, not a second path.
    const runs = (await request(t.url).get(`/v1/sessions/${sessionId}/runs`).expect(200)).body.runs as Array<{
      status: string;
    }>;
    expect(runs.map((r) => r.status)).toEqual(['completed', 'cancelled']);
    expectScenarioHistory(await loadAcpSession(createWebSocketStream(wsUrl(t.url), { WebSocket }), sessionId, t.root));
  });

  it('auth by a first frame {type: auth} for clients that cannot set headers; anything else first closes with 4001', async () => {
    const t = await start({
      config: {
        apiTokens: [
          { token: 'token-acp-first-frame-00001', principal: 'ed', tenantId: 'default', scopes: ['sessions'] },
        ],
      },
    });
    const socket = new WebSocket(wsUrl(t.url));
    const frames: unknown[] = [];
    socket.on('message', (data) => frames.push(JSON.parse(data.toString())));
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'auth', token: 'token-acp-first-frame-00001' }));
    socket.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: 1, clientCapabilities: {} },
      }),
    );
    await eventually(() => frames.length >= 1, 'the initialize answer');
    // A cwd outside the workspace roots is refused with our error shape in the JSON-RPC error's data.
    socket.send(
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: '/etc', mcpServers: [] } }),
    );
    await eventually(() => frames.length >= 2, 'two answers');
    const byId = (id: number) => frames.find((f) => (f as { id?: number }).id === id);
    expect(byId(1)).toMatchObject({ id: 1, result: { protocolVersion: 1 } });
    expect(byId(2)).toMatchObject({
      id: 2,
      error: { code: -32602, data: { error: { code: expect.stringMatching(/^WORKSPACE_/) } } },
    });
    socket.close();

    const anonymous = new WebSocket(wsUrl(t.url));
    await new Promise((resolve) => anonymous.once('open', resolve));
    anonymous.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: 1, clientCapabilities: {} },
      }),
    );
    const code = await new Promise<number>((resolve) => anonymous.once('close', (closeCode) => resolve(closeCode)));
    expect(code).toBe(4001);
  });

  it('a plain GET answers 426', async () => {
    const t = await start();
    const res = await request(t.url).get('/acp').expect(426);
    expect(res.body.error.code).toBe('UPGRADE_REQUIRED');
  });
});

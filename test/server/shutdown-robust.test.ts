import { connect } from 'node:net';
import request from 'supertest';
import { describe, expect, inject, it } from 'vitest';
import { McpServerConfigSchema } from '../../src/protocol/mcp.js';
import { anonymousCaller } from '../../src/server/authenticator.js';
import { echoServerConfig, livePidsWithArgument, waitFor } from '../mcp/mcp-test-helpers.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { startTestServer } from '../support/test-server.js';
import { sessionKey } from '../../src/stores/session-key.js';

describe('shutdown completes whatever fails on the way', () => {
  it('closes the HTTP port and resolves even when Redis became unreachable', async () => {
    const proxy = await startTcpProxy(inject('redisUrl'));
    try {
      const t = await startTestServer({
        config: { redisUrl: proxy.url, redisKeyPrefix: `a3s-down-${Math.random().toString(36).slice(2)}:` },
      });
      await request(t.url).post('/v1/sessions').send({ sessionId: 'kept', autoSave: true }).expect(201);
      proxy.cut('refuse');
      await expect(t.close()).resolves.toBeUndefined();
      // The port no longer answers: nothing was left half open.
      const refused = await new Promise<string>((resolve) => {
        const socket = connect({ host: '127.0.0.1', port: t.server.port });
        socket.once('connect', () => (socket.destroy(), resolve('connected')));
        socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      });
      expect(refused).toBe('ECONNREFUSED');
    } finally {
      await proxy.close();
    }
  });

  it('a session still being opened when shutdown begins is discarded with its stdio MCP server, not stored, and its caller gets SHUTTING_DOWN', async () => {
    // The fixture lives outside the workspace: host-supplied stdio servers run unsandboxed here.
    const t = await startTestServer({ config: { sandbox: { hostDirect: 'none' } } });
    try {
      const marker = `late-${Math.random().toString(36).slice(2)}`;
      // Admission is checked before the first await; the MCP server then starts while shutdown begins.
      const opening = t.server.ctx.agent.createSession(
        {
          sessionId: 'late',
          autoSave: true,
          mcpServers: [McpServerConfigSchema.parse(echoServerConfig('echo', marker))],
        },
        anonymousCaller(),
      );
      t.server.ctx.agent.beginShutdown();
      await expect(opening).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });
      expect(t.server.ctx.agent.sessionCount).toBe(0);
      // Nothing was stored for it either (autoSave would have stored it at creation): no hydration brings it back.
      expect(await t.server.ctx.store.load(sessionKey('default', 'late'))).toBeUndefined();
      expect(await waitFor(async () => (await livePidsWithArgument(marker)).length === 0)).toBe(true);
    } finally {
      await t.close();
    }
  });
});

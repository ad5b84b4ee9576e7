// Confirmations through the typed client: the seed's confirmToolUse(toolId, approved, reason) plus the
// additive options {always, argsDigest}, against a real server whose policy asks for bash.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { A3sClient, ConfirmationMismatchError, type Session } from '../../src/client/index.js';
import { eventually } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const HOST = 'token-client-confirm-host-001';

describe('confirmToolUse through the client', () => {
  let t: TestServer;
  let session: Session;
  const pendingOne = async () => {
    let found: Awaited<ReturnType<Session['pendingConfirmations']>>[number] | undefined;
    await eventually(
      async () => (found = (await session.pendingConfirmations())[0]) !== undefined,
      'a pending confirmation',
    );
    return found as NonNullable<typeof found>;
  };

  beforeAll(async () => {
    t = await startTestServer({
      config: {
        apiTokens: [{ token: HOST, principal: 'me', tenantId: 'default', scopes: ['sessions', 'host_direct'] }],
      },
    });
    const client = new A3sClient({
      baseUrl: t.url,
      token: HOST,
      WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    });
    session = await client.session(undefined, {
      permissionPolicy: { allow: ['read'], defaultDecision: 'ask' },
      confirmationPolicy: { enabled: true, defaultTimeoutMs: 20_000 },
    });
  });
  afterAll(async () => t?.close());

  it('always: true grants the rest of the session; a stale argsDigest is refused; reject carries the reason', async () => {
    const first = session.governedTool('bash', { command: 'echo granted' });
    const asked = await pendingOne();
    expect(asked.toolName).toBe('bash');
    await expect(
      session.confirmToolUse(asked.toolId, true, undefined, { argsDigest: '0'.repeat(64) }),
    ).rejects.toBeInstanceOf(ConfirmationMismatchError);
    expect(
      await session.confirmToolUse(asked.toolId, true, undefined, { always: true, argsDigest: asked.argsDigest }),
    ).toBe(true);
    expect(await first).toMatchObject({ exitCode: 0 });
    // Granted: the same command runs without asking.
    expect(await session.governedTool('bash', { command: 'echo granted' })).toMatchObject({ exitCode: 0 });
    expect(await session.pendingConfirmations()).toEqual([]);
    const other = session.governedTool('bash', { command: 'echo other' });
    const again = await pendingOne();
    expect(await session.confirmToolUse(again.toolId, false, 'not this one')).toBe(true);
    expect(String((await other).output)).toContain('not this one');
  });
});

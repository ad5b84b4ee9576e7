import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const SESSIONS = 'token-always-sessions-only-1';
const HOST = 'token-always-host-direct-001';
const TOKENS = [
  { token: SESSIONS, principal: 'bot', tenantId: 'team', scopes: ['sessions'] },
  { token: HOST, principal: 'ci', tenantId: 'team', scopes: ['sessions', 'host_direct'] },
];
// The operator allows reading; everything else asks a human.
const OPERATOR_POLICY = { allow: ['read', 'ls'], defaultDecision: 'ask' };
const CONFIRM = { enabled: true, defaultTimeoutMs: 20_000, timeoutAction: 'reject' };

interface Pending {
  toolId: string;
  toolName: string;
  alwaysNeedsHostDirect?: boolean;
}

describe('"allow always" in the confirmation broker, over REST', () => {
  let t: TestServer;
  const as = (token: string) => (r: request.Test) => r.set('authorization', `Bearer ${token}`);
  const pending = async (session: string): Promise<Pending[]> =>
    (await as(HOST)(request(t.url).get(`/v1/sessions/${session}/confirmations`)).expect(200)).body
      .confirmations as Pending[];
  /** Start a governed call (it waits for a confirmation when the policy asks) and return its answer's promise. */
  const call = (token: string, session: string, tool: string, args: Record<string, unknown>) =>
    as(token)(request(t.url).post(`/v1/sessions/${session}/tools/${tool}/governed`))
      .send({ args })
      .then((res) => res.body as { output: string; exitCode: number });
  const waitPending = async (session: string): Promise<Pending> => {
    let found: Pending | undefined;
    await eventually(async () => {
      found = (await pending(session))[0];
      return found !== undefined;
    }, 'a pending confirmation');
    return found as Pending;
  };
  const answer = async (token: string, session: string, toolId: string, body: Record<string, unknown>) =>
    (
      await as(token)(request(t.url).post(`/v1/sessions/${session}/confirmations/${encodeURIComponent(toolId)}`))
        .send(body)
        .expect(200)
    ).body as { approved: boolean; always?: boolean };

  beforeAll(async () => {
    t = await startTestServer({
      files: { 'team/a.txt': 'alpha\n' },
      config: { apiTokens: TOKENS, defaultPermissionPolicy: OPERATOR_POLICY, defaultConfirmationPolicy: CONFIRM },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('a token without host_direct gets allow once where the operator policy asks; a host_direct token grants, and the same commands then pass', async () => {
    await as(SESSIONS)(request(t.url).post('/v1/sessions')).send({ sessionId: 'floor' }).expect(201);
    const first = call(SESSIONS, 'floor', 'bash', { command: 'echo one' });
    const asked = await waitPending('floor');
    expect(asked).toMatchObject({ toolName: 'bash', alwaysNeedsHostDirect: true });
    expect(await answer(SESSIONS, 'floor', asked.toolId, { approved: true, always: true })).toEqual(
      expect.objectContaining({ approved: true, always: false }),
    );
    expect(await first).toMatchObject({ exitCode: 0, output: expect.stringContaining('one') });

    // Allow always acted as allow once: the same call asks again.
    const second = call(SESSIONS, 'floor', 'bash', { command: 'echo one' });
    const askedAgain = await waitPending('floor');
    expect(await answer(HOST, 'floor', askedAgain.toolId, { approved: true, always: true })).toEqual(
      expect.objectContaining({ approved: true, always: true }),
    );
    expect((await second).exitCode).toBe(0);

    // Granted: the same command passes without asking; another command still asks.
    expect(await call(SESSIONS, 'floor', 'bash', { command: 'echo one' })).toMatchObject({
      exitCode: 0,
      output: expect.stringContaining('one'),
    });
    expect(await pending('floor')).toEqual([]);
    const other = call(SESSIONS, 'floor', 'bash', { command: 'echo two' });
    const otherAsk = await waitPending('floor');
    expect(await answer(SESSIONS, 'floor', otherAsk.toolId, { approved: false, reason: 'no' })).toMatchObject({
      approved: false,
    });
    expect((await other).output).toContain('rejected: no');
  });

  it("where only the session's own policy asks, a token without host_direct may allow always", async () => {
    await as(SESSIONS)(request(t.url).post('/v1/sessions'))
      .send({ sessionId: 'own', permissionPolicy: { ask: ['ls'], defaultDecision: 'ask' } })
      .expect(201);
    const first = call(SESSIONS, 'own', 'ls', {});
    const asked = await waitPending('own');
    expect(asked).toMatchObject({ toolName: 'ls', alwaysNeedsHostDirect: false });
    expect(await answer(SESSIONS, 'own', asked.toolId, { approved: true, always: true })).toMatchObject({
      always: true,
    });
    expect((await first).exitCode).toBe(0);
    expect((await call(SESSIONS, 'own', 'ls', {})).exitCode).toBe(0);
    expect(await pending('own')).toEqual([]);
  });

  it('always with a rejection grants nothing, and a bad always is a 400 naming the field', async () => {
    await as(HOST)(request(t.url).post('/v1/sessions')).send({ sessionId: 'reject' }).expect(201);
    const first = call(HOST, 'reject', 'bash', { command: 'echo three' });
    const asked = await waitPending('reject');
    const bad = await as(HOST)(
      request(t.url).post(`/v1/sessions/reject/confirmations/${encodeURIComponent(asked.toolId)}`),
    )
      .send({ approved: true, always: 'yes' })
      .expect(400);
    expect(JSON.stringify(bad.body.error)).toContain('always');
    expect(await answer(HOST, 'reject', asked.toolId, { approved: false, always: true })).toMatchObject({
      approved: false,
      always: false,
    });
    expect((await first).output).toContain('rejected');
    const again = call(HOST, 'reject', 'bash', { command: 'echo three' });
    const askedAgain = await waitPending('reject');
    await answer(HOST, 'reject', askedAgain.toolId, { approved: true });
    expect((await again).exitCode).toBe(0);
  });
});

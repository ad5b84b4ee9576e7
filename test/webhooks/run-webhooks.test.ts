import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { A3sClient, WebhookSecretMissingError } from '../../src/client/index.js';
import type { WebhookDelivery } from '../../src/protocol/webhooks.js';
import { waitUntil } from '../cluster/wait-until.js';
import { createSession, runAndWait, useTestServers } from '../support/run-helpers.js';
import type { TestServer } from '../support/test-server.js';
import { startRecordingReceiver, status, type RecordingReceiver } from '../support/webhook-receiver.js';
import { startReceiver, verifyWebhook, type Receiver } from './receiver-example.js';

// Run webhooks through the front door: a server on 127.0.0.1 POSTs to real receivers on 127.0.0.1 (which the
// anonymous loopback caller, holding every scope, may name; the refusal test uses a sessions-only token).
const SECRET = 'whsec-current-0123456789abcdef';
const OLD_SECRET = 'whsec-retired-0123456789abcdef';

const start = useTestServers();
const receivers: Array<RecordingReceiver | Receiver> = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

async function recording(...args: Parameters<typeof startRecordingReceiver>): Promise<RecordingReceiver> {
  const receiver = await startRecordingReceiver(...args);
  receivers.push(receiver);
  return receiver;
}

function server(webhooks: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Promise<TestServer> {
  return start({
    config: { webhooks: { secrets: { default: [SECRET] }, retryDelaysMs: [0, 150, 300], ...webhooks }, ...extra },
  });
}

async function deliveries(t: TestServer, sessionId: string, token?: string): Promise<WebhookDelivery[]> {
  const req = request(t.url).get(`/v1/sessions/${sessionId}/webhooks/deliveries`);
  if (token) req.set('authorization', `Bearer ${token}`);
  const res = await req.expect(200);
  return (res.body as { deliveries: WebhookDelivery[] }).deliveries;
}

async function runWithWebhook(t: TestServer, sessionId: string, webhook: Record<string, unknown>): Promise<string> {
  t.fake.script({ text: 'done' });
  const res = await request(t.url)
    .post(`/v1/sessions/${sessionId}/runs`)
    .send({ input: 'hello', wait: true, webhook })
    .expect(200);
  return (res.body as { runId: string }).runId;
}

describe('run webhooks', () => {
  it('POSTs the finished run, signed over "<t>.<body>" with the tenant secret', async () => {
    const t = await server();
    const receiver = await recording();
    const sessionId = await createSession(t);
    const runId = await runWithWebhook(t, sessionId, { url: receiver.url });
    await waitUntil('the delivery arrived', () => receiver.received.length === 1);
    const [got] = receiver.received;
    expect(got!.headers['a3s-event']).toBe('run_completed');
    const deliveryId = got!.headers['a3s-delivery-id'];
    expect(deliveryId).toMatch(/^whd_[0-9a-f]{32}$/);
    expect(verifyWebhook(got!.headers, got!.raw, [SECRET])).toEqual({ ok: true });
    expect(verifyWebhook(got!.headers, got!.raw, ['some-other-secret-0123456789'])).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    const body = got!.body as {
      type: string;
      deliveryId: string;
      runId: string;
      run: { status: string };
      result: { text: string };
    };
    expect(body).toMatchObject({ type: 'run_completed', deliveryId, runId, sessionId });
    expect(body.run.status).toBe('completed');
    expect(body.result.text).toBe('done');
    // The signature covers the exact bytes: a changed body no longer verifies.
    expect(verifyWebhook(got!.headers, got!.raw.replace('done', 'DONE'), [SECRET]).ok).toBe(false);
    await waitUntil('the log says delivered', async () => (await deliveries(t, sessionId))[0]?.status === 'delivered');
    const [entry] = await deliveries(t, sessionId);
    expect(entry).toMatchObject({
      deliveryId,
      event: 'run_completed',
      runId,
      attempts: 1,
      lastStatus: 200,
      lastError: null,
    });
  });

  it("redacts secrets from the body with the server's secret redactor (configured ones and known formats)", async () => {
    const t = await server();
    const receiver = await recording();
    const sessionId = await createSession(t);
    const leaked = `the key is sk-${'a1'.repeat(15)} and the provider's is sk-test-and-more and ${SECRET}`;
    t.fake.script({ text: leaked });
    await request(t.url)
      .post(`/v1/sessions/${sessionId}/runs`)
      .send({ input: `echo ${SECRET}`, wait: true, webhook: { url: receiver.url } })
      .expect(200);
    await waitUntil('the delivery arrived', () => receiver.received.length === 1);
    const got = receiver.received[0]!;
    expect(got.raw).not.toContain(SECRET);
    expect(got.raw).not.toContain(`sk-${'a1'.repeat(15)}`);
    const body = got.body as { run: { input: string }; result: { text: string } };
    expect(body.result.text).toContain('[REDACTED]');
    expect(body.run.input).toBe('echo [REDACTED]');
    expect(verifyWebhook(got.headers, got.raw, [SECRET]).ok).toBe(true);
  });

  it('signs with both secrets while rotating: a receiver knowing either one accepts', async () => {
    const t = await server({ secrets: { default: [SECRET, OLD_SECRET] } });
    const receiver = await recording();
    const sessionId = await createSession(t);
    await runWithWebhook(t, sessionId, { url: receiver.url });
    await waitUntil('the delivery arrived', () => receiver.received.length === 1);
    const got = receiver.received[0]!;
    const header = String(got.headers['a3s-signature']);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verifyWebhook(got.headers, got.raw, [OLD_SECRET]).ok).toBe(true);
    expect(verifyWebhook(got.headers, got.raw, [SECRET]).ok).toBe(true);
  });

  it('retries after 500s with the same delivery id and body, then records the success', async () => {
    const t = await server();
    const receiver = await recording((res, index) => status(index < 2 ? 500 : 204)(res, index));
    const sessionId = await createSession(t);
    await runWithWebhook(t, sessionId, { url: receiver.url });
    await waitUntil('three attempts arrived', () => receiver.received.length === 3);
    const ids = new Set(receiver.received.map((r) => r.headers['a3s-delivery-id']));
    expect(ids.size).toBe(1);
    expect(new Set(receiver.received.map((r) => r.raw)).size).toBe(1);
    // The schedule is measured from when the delivery was recorded: 0, 150 and 300 ms.
    expect(receiver.received[2]!.atMs - receiver.received[0]!.atMs).toBeGreaterThanOrEqual(250);
    await waitUntil('the log says delivered', async () => (await deliveries(t, sessionId))[0]?.status === 'delivered');
    expect((await deliveries(t, sessionId))[0]).toMatchObject({ attempts: 3, lastStatus: 204, lastError: null });
  });

  it('gives up after the last attempt and keeps the last error', async () => {
    const t = await server();
    const receiver = await recording(status(500));
    const sessionId = await createSession(t);
    await runWithWebhook(t, sessionId, { url: receiver.url });
    await waitUntil('the log says failed', async () => (await deliveries(t, sessionId))[0]?.status === 'failed');
    expect((await deliveries(t, sessionId))[0]).toMatchObject({
      attempts: 3,
      lastStatus: 500,
      lastError: 'answered HTTP 500',
      nextAttemptAtMs: null,
    });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(receiver.received).toHaveLength(3);
  });

  it('times an attempt out and tries again', async () => {
    const t = await server({ attemptTimeoutMs: 300, retryDelaysMs: [0, 100] });
    // The first answer never comes; the second is at once.
    const receiver = await recording((res, index) => (index === 0 ? undefined : status(200)(res, index)));
    const sessionId = await createSession(t);
    await runWithWebhook(t, sessionId, { url: receiver.url });
    await waitUntil('the log says delivered', async () => (await deliveries(t, sessionId))[0]?.status === 'delivered');
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.atMs - receiver.received[0]!.atMs).toBeGreaterThanOrEqual(290);
    expect((await deliveries(t, sessionId))[0]).toMatchObject({ attempts: 2, lastStatus: 200 });
  });

  it('reads at most 4 KiB of an answer: an endless 2xx answer is delivered, and its connection closed', async () => {
    const t = await server({ attemptTimeoutMs: 5000 });
    const receiver = await recording((res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      // 64 KiB now and never an end: reading it all would wait for the timeout.
      res.write('x'.repeat(64 * 1024));
    });
    const sessionId = await createSession(t);
    await runWithWebhook(t, sessionId, { url: receiver.url });
    await waitUntil('the log says delivered', async () => (await deliveries(t, sessionId))[0]?.status === 'delivered');
    const [entry] = await deliveries(t, sessionId);
    expect(entry!.attempts).toBe(1);
    expect(entry!.lastAttemptAtMs! - receiver.received[0]!.atMs).toBeLessThan(2000);
    await waitUntil('the server closed the unfinished answer', () => receiver.abandoned === 1);
  });

  it('uses the session default webhook for runs that name none, with the events it asks for', async () => {
    const t = await server();
    const receiver = await recording();
    const sessionId = await createSession(t, { webhook: { url: receiver.url, events: ['run_failed'] } });
    t.fake.script({ text: 'fine' });
    await runAndWait(t, sessionId, 'first');
    t.fake.script({ error: { status: 400, message: 'bad request' } });
    const failed = await request(t.url)
      .post(`/v1/sessions/${sessionId}/runs`)
      .send({ input: 'second', wait: true })
      .expect(200);
    const runId = (failed.body as { runId: string }).runId;
    await waitUntil('the failure was delivered', () => receiver.received.length === 1);
    expect(receiver.received[0]!.body).toMatchObject({ type: 'run_failed', runId });
    expect(receiver.received[0]!.headers['a3s-event']).toBe('run_failed');
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The completed run was not asked for.
    expect(receiver.received).toHaveLength(1);
  });

  it('tells the webhook of each confirmation the run waits for, then of its end', async () => {
    // The built-in permission policy, which asks before a write.
    const t = await server({}, { defaultPermissionPolicy: undefined });
    const receiver = await recording();
    const sessionId = await createSession(t, { confirmationPolicy: { enabled: true, defaultTimeoutMs: 20_000 } });
    t.fake.script(
      { toolCalls: [{ id: 'c_w', name: 'write', arguments: { file_path: 'approved.txt', content: 'yes' } }] },
      { text: 'written' },
    );
    const started = await request(t.url)
      .post(`/v1/sessions/${sessionId}/runs`)
      .send({ input: 'write it', webhook: { url: receiver.url, events: ['confirmation_required', 'run_completed'] } })
      .expect(202);
    const runId = (started.body as { runId: string }).runId;
    await waitUntil('the confirmation was delivered', () => receiver.received.length === 1);
    const asked = receiver.received[0]!;
    expect(asked.headers['a3s-event']).toBe('confirmation_required');
    expect(asked.body).toMatchObject({
      type: 'confirmation_required',
      runId,
      confirmation: { toolId: 'c_w', toolName: 'write' },
      run: { status: 'executing' },
      result: null,
    });
    // The call's arguments (user content) stay on the server: the receiver asks for them with its token.
    expect(asked.raw).not.toContain('approved.txt');
    await request(t.url).post(`/v1/sessions/${sessionId}/confirmations/c_w`).send({ approved: true }).expect(200);
    await waitUntil('the end was delivered', () => receiver.received.length === 2);
    expect(receiver.received[1]!.body).toMatchObject({ type: 'run_completed', runId, result: { text: 'written' } });
    expect(receiver.received[1]!.headers['a3s-delivery-id']).not.toBe(asked.headers['a3s-delivery-id']);
    const log = await deliveries(t, sessionId);
    expect(log.map((d) => d.event).sort()).toEqual(['confirmation_required', 'run_completed']);
  });

  it('the typed client sends a run webhook and reads the log; WebhookSecretMissingError without a secret', async () => {
    const t = await server();
    const receiver = await recording();
    const client = new A3sClient({ baseUrl: t.url });
    const session = await client.session();
    t.fake.script({ text: 'from the client' });
    const result = await session.send('hello', undefined, { webhook: { url: receiver.url } });
    expect(result.text).toBe('from the client');
    await waitUntil('the delivery arrived', () => receiver.received.length === 1);
    await waitUntil(
      'the client reads it delivered',
      async () => (await client.webhookDeliveries(session.sessionId))[0]?.status === 'delivered',
    );
    const [entry] = await client.webhookDeliveries(session.sessionId);
    expect(entry!.deliveryId).toBe(receiver.received[0]!.headers['a3s-delivery-id']);
    const bare = await start();
    const other = await new A3sClient({ baseUrl: bare.url }).session();
    await expect(other.send('hello', undefined, { webhook: { url: receiver.url } })).rejects.toBeInstanceOf(
      WebhookSecretMissingError,
    );
  });

  it('a pending delivery survives a restart on the file store and is sent with the same id', async () => {
    const config = { webhooks: { secrets: { default: [SECRET] }, retryDelaysMs: [0, 1500], scanIntervalMs: 200 } };
    const first = await start({ config });
    const receiver = await recording((res, index) => status(index === 0 ? 500 : 200)(res, index));
    const sessionId = await createSession(first, { autoSave: true });
    await runWithWebhook(first, sessionId, { url: receiver.url });
    await waitUntil('the first attempt failed', async () => (await deliveries(first, sessionId))[0]?.attempts === 1);
    await first.close();
    const second = await start({ config, dataDir: first.dataDir, root: first.root });
    await waitUntil('the restarted server sent it', () => receiver.received.length === 2, 10_000);
    expect(receiver.received[1]!.headers['a3s-delivery-id']).toBe(receiver.received[0]!.headers['a3s-delivery-id']);
    expect(receiver.received[1]!.raw).toBe(receiver.received[0]!.raw);
    await waitUntil(
      'the log says delivered',
      async () => (await deliveries(second, sessionId))[0]?.status === 'delivered',
    );
    expect((await deliveries(second, sessionId))[0]).toMatchObject({ attempts: 2, lastStatus: 200 });
  });

  it('the session default covers runs of every door: a queued run and an AG-UI run', async () => {
    const t = await server();
    const receiver = await recording();
    const sessionId = await createSession(t, { webhook: { url: receiver.url } });
    t.fake.script({ text: 'first', delayMs: 300 }, { text: 'queued one' }, { text: 'from ag-ui' });
    const first = await request(t.url).post(`/v1/sessions/${sessionId}/runs`).send({ input: 'one' }).expect(202);
    const queued = await request(t.url)
      .post(`/v1/sessions/${sessionId}/runs`)
      .send({ input: 'two', multitaskStrategy: 'enqueue' })
      .expect(202);
    expect(queued.body.queuePosition).toBe(1);
    await waitUntil('both runs delivered', () => receiver.received.length === 2, 10_000);
    const agui = await request(t.url)
      .post(`/v1/agui/${sessionId}`)
      .send({ threadId: sessionId, runId: 'agui-run-1', messages: [{ id: 'u1', role: 'user', content: 'three' }] });
    expect(agui.status).toBe(200);
    await waitUntil('the AG-UI run delivered', () => receiver.received.length === 3, 10_000);
    const runIds = receiver.received.map((r) => (r.body as { runId: string }).runId);
    expect(runIds.slice(0, 2)).toEqual([first.body.runId, queued.body.runId]);
    expect(receiver.received.map((r) => (r.body as { result: { text: string } }).result.text)).toEqual([
      'first',
      'queued one',
      'from ag-ui',
    ]);
  });

  it('refuses a webhook when the tenant has no secret: 400 WEBHOOK_SECRET_MISSING', async () => {
    const t = await start();
    const sessionId = await createSession(t);
    const res = await request(t.url)
      .post(`/v1/sessions/${sessionId}/runs`)
      .send({ input: 'hello', webhook: { url: 'https://example.com/hook' } })
      .expect(400);
    expect(res.body.error.code).toBe('WEBHOOK_SECRET_MISSING');
    expect(res.body.error.details.field).toBe('body.webhook');
    const created = await request(t.url)
      .post('/v1/sessions')
      .send({ webhook: { url: 'https://example.com/hook' } })
      .expect(400);
    expect(created.body.error.code).toBe('WEBHOOK_SECRET_MISSING');
    t.fake.assertDone();
  });

  it('refuses a private URL for a sessions-only caller, and takes it from a host_direct one', async () => {
    const tenantToken = 'tenant-sessions-0123456789';
    const hostToken = 'tenant-hostdirect-0123456789';
    const t = await start({
      config: {
        apiTokens: [
          { token: tenantToken, principal: 'bot', tenantId: 'acme', scopes: ['sessions'] },
          { token: hostToken, principal: 'ops', tenantId: 'acme', scopes: ['sessions', 'host_direct'] },
        ],
        webhooks: { secrets: { acme: [SECRET] } },
      },
    });
    const receiver = await recording();
    const created = await request(t.url)
      .post('/v1/sessions')
      .set('authorization', `Bearer ${tenantToken}`)
      .send({})
      .expect(201);
    const sessionId = (created.body as { session: { id: string } }).session.id;
    for (const url of [receiver.url, 'http://169.254.169.254/latest', 'http://[::1]:9/x', 'http://localhost:9/x']) {
      const res = await request(t.url)
        .post(`/v1/sessions/${sessionId}/runs`)
        .set('authorization', `Bearer ${tenantToken}`)
        .send({ input: 'hello', webhook: { url } })
        .expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.field).toBe('body.webhook.url');
    }
    // The session option is checked the same way when the session is created.
    const option = await request(t.url)
      .post('/v1/sessions')
      .set('authorization', `Bearer ${tenantToken}`)
      .send({ webhook: { url: receiver.url } })
      .expect(400);
    expect(option.body.error.details.field).toBe('webhook.url');
    t.fake.script({ text: 'done' });
    await request(t.url)
      .post(`/v1/sessions/${sessionId}/runs`)
      .set('authorization', `Bearer ${hostToken}`)
      .send({ input: 'hello', wait: true, webhook: { url: receiver.url } })
      .expect(200);
    await waitUntil('the delivery arrived', () => receiver.received.length === 1);
    expect(verifyWebhook(receiver.received[0]!.headers, receiver.received[0]!.raw, [SECRET]).ok).toBe(true);
    await waitUntil(
      'the log says delivered',
      async () => (await deliveries(t, sessionId, tenantToken))[0]?.status === 'delivered',
    );
  });

  it('the receiver example drops repeats and rejects replays older than five minutes', async () => {
    const t = await server();
    let clock = Math.floor(Date.now() / 1000);
    const example = await startReceiver([SECRET], () => clock);
    receivers.push(example);
    const sessionId = await createSession(t);
    await runWithWebhook(t, sessionId, { url: example.url });
    await waitUntil('the example accepted it', () => example.accepted.length === 1);
    // Replay what the server sent, byte for byte: a retry now is dropped as a repeat, one six minutes later refused.
    const probe = await recording();
    await runWithWebhook(t, sessionId, { url: probe.url });
    await waitUntil('the probe got one', () => probe.received.length === 1);
    const sent = probe.received[0]!;
    const replay = () =>
      fetch(example.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'a3s-signature': String(sent.headers['a3s-signature']),
          'a3s-delivery-id': String(sent.headers['a3s-delivery-id']),
        },
        body: sent.raw,
      });
    expect((await replay()).status).toBe(200);
    expect((await replay()).status).toBe(200);
    expect(example.accepted).toHaveLength(2);
    clock += 6 * 60;
    expect((await replay()).status).toBe(400);
    expect(example.refused).toEqual(['stale']);
    const forged = await fetch(example.url, {
      method: 'POST',
      headers: { 'a3s-signature': `t=${clock},v1=${'0'.repeat(64)}`, 'a3s-delivery-id': 'whd_x' },
      body: sent.raw,
    });
    expect(forged.status).toBe(400);
    expect(example.refused).toEqual(['stale', 'bad_signature']);
  });

  it('lists deliveries newest first, and removes them when the session is purged', async () => {
    const t = await server();
    const receiver = await recording();
    const sessionId = await createSession(t);
    const first = await runWithWebhook(t, sessionId, { url: receiver.url });
    await waitUntil('one delivered', () => receiver.received.length === 1);
    const second = await runWithWebhook(t, sessionId, { url: receiver.url, events: ['run_completed'] });
    await waitUntil(
      'two delivered',
      async () =>
        (await deliveries(t, sessionId)).every((d) => d.status === 'delivered') &&
        (await deliveries(t, sessionId)).length === 2,
    );
    const log = await deliveries(t, sessionId);
    expect(log.map((d) => d.runId)).toEqual([second, first]);
    expect(new Set(log.map((d) => d.deliveryId)).size).toBe(2);
    for (const entry of log) expect(entry.url).toBe(receiver.url);
    const dir = join(t.dataDir, 'webhooks');
    expect(readdirSync(dir).filter((n) => n.endsWith('.json'))).toHaveLength(1);
    await request(t.url).delete(`/v1/sessions/${sessionId}?purge=true`).expect(200);
    expect(existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.json')) : []).toHaveLength(0);
    // A purged session is gone (410 SESSION_CLOSED on the node that closed it), and so is its log.
    await request(t.url).get(`/v1/sessions/${sessionId}/webhooks/deliveries`).expect(410);
  });
});

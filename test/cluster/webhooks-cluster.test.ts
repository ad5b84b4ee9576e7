import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { retry, startProcessCluster, type ProcessCluster } from '../support/process-cluster.js';
import { startRecordingReceiver, status, type RecordingReceiver } from '../support/webhook-receiver.js';
import { verifyWebhook } from '../webhooks/receiver-example.js';
import { waitUntil } from './wait-until.js';

// Two server processes on one Redis: a delivery recorded on node A is finished by node B with the same
// A3S-Delivery-Id when A dies mid-attempt, and a run A was running when it died delivers from B once resumed there.
const SECRET = 'whsec-cluster-0123456789abcdef';
const WEBHOOKS = {
  secrets: { default: [SECRET] },
  retryDelaysMs: [0, 200, 400, 800],
  attemptTimeoutMs: 1000,
  claimTtlMs: 1500,
  scanIntervalMs: 200,
};

interface Delivery {
  deliveryId: string;
  status: string;
  runId: string;
  event: string;
}

describe('run webhooks across nodes', () => {
  let cluster: ProcessCluster | undefined;
  let receiver: RecordingReceiver | undefined;
  afterEach(async () => {
    await cluster?.close();
    await receiver?.close();
    cluster = undefined;
    receiver = undefined;
  });

  it('a delivery node A was attempting when it died is sent by node B with the same delivery id', async () => {
    // The first attempt never gets an answer (A dies holding it); later ones are answered at once.
    receiver = await startRecordingReceiver((res, index) => (index === 0 ? undefined : status(200)(res, index)));
    cluster = await startProcessCluster({ webhooks: WEBHOOKS });
    const { a, urlA, urlB, fake } = cluster;
    await request(urlA).post('/v1/sessions').send({ sessionId: 'wh1', autoSave: true }).expect(201);
    fake.script({ text: 'done on A' });
    const runId = (
      await request(urlA)
        .post('/v1/sessions/wh1/runs')
        .send({ input: 'hello', wait: true, webhook: { url: receiver.url } })
        .expect(200)
    ).body.runId as string;
    await waitUntil('A attempted the delivery', () => receiver!.received.length === 1, 10_000);
    a.child.kill('SIGKILL');
    await a.exited;
    // B sees the pending delivery once A's claim lapses (claim_ttl_ms) and sends the same body with the same id.
    await waitUntil('B attempted it', () => receiver!.received.length === 2, 15_000);
    const [first, second] = receiver.received;
    expect(second!.headers['a3s-delivery-id']).toBe(first!.headers['a3s-delivery-id']);
    expect(second!.raw).toBe(first!.raw);
    expect(verifyWebhook(second!.headers, second!.raw, [SECRET]).ok).toBe(true);
    expect(second!.body).toMatchObject({ type: 'run_completed', runId });
    const log = await retry(
      async () => {
        const res = await request(urlB).get('/v1/sessions/wh1/webhooks/deliveries');
        return res.status === 200 ? (res.body.deliveries as Delivery[]) : [];
      },
      (entries) => entries[0]?.status === 'delivered',
    );
    expect(log).toEqual([
      expect.objectContaining({
        deliveryId: first!.headers['a3s-delivery-id'],
        status: 'delivered',
        runId,
        event: 'run_completed',
      }),
    ]);
  });

  it('a run resumed on node B after node A died delivers to the webhook it was started with', async () => {
    receiver = await startRecordingReceiver();
    cluster = await startProcessCluster({ webhooks: WEBHOOKS });
    const { a, urlA, urlB, fake } = cluster;
    await request(urlA).post('/v1/sessions').send({ sessionId: 'wh2', autoSave: true, autoResume: true }).expect(201);
    // One tool round (checkpointed), then the model hangs on A.
    fake.script({ toolCalls: [{ id: 'l1', name: 'ls', arguments: {} }] }, { hang: true });
    const started = (
      await request(urlA)
        .post('/v1/sessions/wh2/runs')
        .send({ input: 'list it', webhook: { url: receiver.url, events: ['run_completed', 'run_failed'] } })
        .expect(202)
    ).body.runId as string;
    await fake.waitForRequests(2, 20_000);
    a.child.kill('SIGKILL');
    await a.exited;
    fake.script({ text: 'resumed on B' });
    await retry(
      async () => (await request(urlB).get('/v1/sessions/wh2')).status,
      (code) => code === 200,
    );
    await waitUntil('B delivered the resumed run', () => receiver!.received.length === 1, 20_000);
    const got = receiver.received[0]!;
    expect(verifyWebhook(got.headers, got.raw, [SECRET]).ok).toBe(true);
    const body = got.body as {
      type: string;
      runId: string;
      originRunId: string;
      run: { metadata?: Record<string, unknown> };
      result: { text: string };
    };
    expect(body.type).toBe('run_completed');
    expect(body.originRunId).toBe(started);
    expect(body.runId).not.toBe(started);
    expect(body.run.metadata?.resumed_from_run_id).toBe(started);
    expect(body.result.text).toBe('resumed on B');
    const log = await retry(
      async () => (await request(urlB).get('/v1/sessions/wh2/webhooks/deliveries')).body.deliveries as Delivery[],
      (entries) => entries[0]?.status === 'delivered',
    );
    expect(log[0]).toMatchObject({ deliveryId: got.headers['a3s-delivery-id'], runId: body.runId });
    // The lost run itself (failed NODE_LOST on B's list) is not delivered: its resumption reports for it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.received).toHaveLength(1);
  });
});

// `a3s webhooks SESSION`, running the built process against a real server and a real receiver.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookDelivery } from '../../src/protocol/webhooks.js';
import { waitUntil } from '../cluster/wait-until.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { startRecordingReceiver, status, type RecordingReceiver } from '../support/webhook-receiver.js';
import { buildCli, removeCli, runA3s } from './a3s-process.js';

describe('a3s webhooks', () => {
  let cli: string;
  let t: TestServer;
  let receiver: RecordingReceiver;
  let env: Record<string, string>;

  beforeAll(async () => {
    cli = buildCli();
    t = await startTestServer({
      config: { webhooks: { secrets: { default: ['whsec-cli-0123456789abcdef'] }, retryDelaysMs: [0, 100] } },
    });
    receiver = await startRecordingReceiver(status(503));
    env = { HOME: tempDir('a3s-home-'), A3S_URL: t.url };
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    if (cli) removeCli(cli);
  });

  it('prints one line per delivery, and --json the list; an unknown session exits 1', async () => {
    await request(t.url).post('/v1/sessions').send({ sessionId: 'cli-hooks' }).expect(201);
    t.fake.script({ text: 'done' });
    const runId = (
      await request(t.url)
        .post('/v1/sessions/cli-hooks/runs')
        .send({ input: 'hi', wait: true, webhook: { url: receiver.url } })
        .expect(200)
    ).body.runId as string;
    const read = async () =>
      (await request(t.url).get('/v1/sessions/cli-hooks/webhooks/deliveries')).body.deliveries as WebhookDelivery[];
    await waitUntil('the delivery failed', async () => (await read())[0]?.status === 'failed');
    const [delivery] = await read();
    const lines = await runA3s(cli, ['webhooks', 'cli-hooks'], { env });
    expect(lines).toMatchObject({
      code: 0,
      stdout: `${delivery!.deliveryId}\trun_completed\tfailed\t2 attempts\t${runId}\tanswered HTTP 503\n`,
    });
    const json = await runA3s(cli, ['webhooks', 'cli-hooks', '--json'], { env });
    expect(JSON.parse(json.stdout)).toEqual([delivery]);
    const unknown = await runA3s(cli, ['webhooks', 'nope'], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^a3s: SESSION_NOT_FOUND: /);
    const usage = await runA3s(cli, ['webhooks'], { env });
    expect(usage.code).toBe(2);
  });
});

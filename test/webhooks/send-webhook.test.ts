import { afterEach, describe, expect, it } from 'vitest';
import type { OutboundResolver } from '../../src/runtime/outbound/check-outbound-url.js';
import { sendWebhook, WEBHOOK_ANSWER_READ_BYTES } from '../../src/runtime/webhooks/send-webhook.js';
import { startRecordingReceiver, status, type RecordingReceiver } from '../support/webhook-receiver.js';

// One attempt against a real receiver on 127.0.0.1, with a resolver playing DNS for names under .test.
const receivers: RecordingReceiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

async function receiver(...args: Parameters<typeof startRecordingReceiver>): Promise<RecordingReceiver> {
  const r = await startRecordingReceiver(...args);
  receivers.push(r);
  return r;
}

const attempt = (url: string, allowPrivate: boolean, resolve?: OutboundResolver) => ({
  url,
  allowPrivate,
  headers: { 'content-type': 'application/json' },
  body: '{"type":"run_completed"}',
  timeoutMs: 2000,
  ...(resolve ? { resolve } : {}),
});

describe('sendWebhook', () => {
  it('connects only to the checked address: a name is resolved once, and the Host header keeps the name', async () => {
    const r = await receiver();
    const port = new URL(r.url).port;
    let lookups = 0;
    const resolve: OutboundResolver = async () => {
      lookups += 1;
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const outcome = await sendWebhook(attempt(`http://hooks.example.test:${port}/hook`, true, resolve));
    expect(outcome).toEqual({ ok: true, status: 200, error: null });
    expect(lookups).toBe(1);
    expect(r.received[0]!.headers.host).toBe(`hooks.example.test:${port}`);
  });

  it('refuses a name that resolves to a private address, or to a mix of public and private ones, without private access', async () => {
    const r = await receiver();
    const port = new URL(r.url).port;
    const loopback: OutboundResolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const mixed: OutboundResolver = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ];
    for (const resolve of [loopback, mixed]) {
      const outcome = await sendWebhook(attempt(`http://rebind.example.test:${port}/hook`, false, resolve));
      expect(outcome.ok).toBe(false);
      expect(outcome.status).toBeNull();
      expect(outcome.error).toMatch(/^url refused: .*range/);
    }
    for (const url of [`http://127.0.0.1:${port}/hook`, 'http://169.254.169.254/latest/meta-data', 'http://[::1]/x'])
      expect((await sendWebhook(attempt(url, false))).error).toMatch(/^url refused: /);
    expect((await sendWebhook(attempt('http://user:pw@example.test/x', true))).error).toMatch(/user information/);
    expect(r.received).toHaveLength(0);
  });

  it('does not follow a redirect, and reads no more than 4 KiB of an answer', async () => {
    const target = await receiver();
    const redirect = await receiver((res) => res.writeHead(307, { location: target.url }).end());
    const outcome = await sendWebhook(attempt(redirect.url, true));
    expect(outcome).toMatchObject({ ok: false, status: 307 });
    expect(outcome.error).toMatch(/redirect/);
    expect(target.received).toHaveLength(0);
    expect(WEBHOOK_ANSWER_READ_BYTES).toBe(4096);
    const failing = await receiver(status(502));
    expect(await sendWebhook(attempt(failing.url, true))).toEqual({
      ok: false,
      status: 502,
      error: 'answered HTTP 502',
    });
  });
});

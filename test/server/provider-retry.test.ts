import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS } from '../../src/runtime/invocation/provider-retry.js';
import { retryAfterMs } from '../../src/runtime/llm/retry-after.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { createSession, eventually, getRun, ofType, runAndWait, runEvents, startRun } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const servers: TestServer[] = [];
const fakes: FakeProvider[] = [];
afterEach(async () => {
  for (const t of servers.splice(0)) await t.close();
  for (const fake of fakes.splice(0)) await fake.close();
});

/** A server whose provider has `providers.openai.max_retries` = maxRetries (the test default is 0). */
async function server(maxRetries: number): Promise<TestServer> {
  const fake = await startFakeProvider();
  fakes.push(fake);
  const t = await startTestServer({
    fake,
    config: { providers: { openai: { apiKey: 'sk-test', baseUrl: fake.baseUrl, maxRetries } } },
  });
  servers.push(t);
  return t;
}

describe('the one provider retry layer', () => {
  it('a 429 with Retry-After is retried after the wait it names, as a provider_retry event', async () => {
    const t = await server(2);
    const id = await createSession(t);
    t.fake.script({ error: { status: 429, message: 'slow down', headers: { 'retry-after': '1' } } }, { text: 'Done.' });
    const started = Date.now();
    const { run, result, runId } = await runAndWait(t, id, 'hello');
    t.fake.assertDone();
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(run.status).toBe('completed');
    expect(result.text).toBe('Done.');
    expect(t.fake.requests).toHaveLength(2);
    const events = await runEvents(t, id, runId);
    expect(ofType(events, 'provider_retry').map((e) => e.payload)).toEqual([
      {
        turn: 1,
        attempt: 1,
        threshold: 2,
        status: 429,
        delay_ms: 1000,
        message: expect.stringContaining('HTTP 429') as unknown,
      },
    ]);
    expect(ofType(events, 'error')).toEqual([]);
  });

  it('500 three times fails with PROVIDER_ERROR status 500 after exactly 1 + max_retries requests', async () => {
    const t = await server(2);
    const id = await createSession(t);
    t.fake.script(
      { error: { status: 500, message: 'down 1' } },
      { error: { status: 500, message: 'down 2' } },
      { error: { status: 500, message: 'down 3' } },
    );
    const { run, runId } = await runAndWait(t, id, 'hello');
    t.fake.assertDone();
    expect(t.fake.requests).toHaveLength(3);
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ code: 'PROVIDER_ERROR', status: 500 });
    expect(run.error?.message).toContain('after 3 request(s)');
    const events = await runEvents(t, id, runId);
    // No backoff header: 200 ms, then 400 ms.
    expect(
      ofType(events, 'provider_retry').map((e) => [e.payload.attempt, e.payload.status, e.payload.delay_ms]),
    ).toEqual([
      [1, 500, 200],
      [2, 500, 400],
    ]);
    expect(ofType(events, 'error').map((e) => e.payload)).toEqual([
      { code: 'PROVIDER_ERROR', status: 500, message: run.error?.message },
    ]);
  });

  it("a 500's message reaches the run's error cut to 500 characters, with the provider key redacted", async () => {
    const fake = await startFakeProvider();
    fakes.push(fake);
    const key = 'sk-live-provider-key-0123456789abcdef';
    const t = await startTestServer({
      fake,
      config: { providers: { openai: { apiKey: key, baseUrl: fake.baseUrl, maxRetries: 0 } } },
    });
    servers.push(t);
    const id = await createSession(t);
    t.fake.script({ error: { status: 500, message: `upstream exploded near ${key} ${'x'.repeat(2000)}` } });
    const { run } = await runAndWait(t, id, 'hello');
    t.fake.assertDone();
    expect(run.error).toMatchObject({ code: 'PROVIDER_ERROR', status: 500 });
    const message = run.error?.message ?? '';
    expect(message).toContain('HTTP 500');
    expect(message).toContain('upstream exploded near [REDACTED]');
    expect(message).not.toContain(key);
    expect(message).not.toContain('x'.repeat(600));
    expect(message.length).toBeLessThan(700);
  });

  it('a 401 or 403 says the status only: those answers echo fragments of the key', async () => {
    const t = await server(0);
    const id = await createSession(t);
    t.fake.script({ error: { status: 401, message: 'Incorrect API key provided: sk-te**st. Find yours at ...' } });
    const first = await runAndWait(t, id, 'hello');
    expect(first.run.error).toMatchObject({ code: 'PROVIDER_ERROR', status: 401 });
    expect(first.run.error?.message).toContain('HTTP 401');
    expect(first.run.error?.message).not.toContain('sk-te');
    t.fake.script({ error: { status: 403, message: 'key sk-te**st is not allowed here' } });
    const second = await runAndWait(t, id, 'again');
    t.fake.assertDone();
    expect(second.run.error).toMatchObject({ code: 'PROVIDER_ERROR', status: 403 });
    expect(second.run.error?.message).not.toContain('sk-te');
  });

  it('a 400 is not retried', async () => {
    const t = await server(2);
    const id = await createSession(t);
    t.fake.script({ error: { status: 400, message: 'bad request' } });
    const { run, runId } = await runAndWait(t, id, 'hello');
    t.fake.assertDone();
    expect(t.fake.requests).toHaveLength(1);
    expect(run.error).toMatchObject({ code: 'PROVIDER_ERROR', status: 400 });
    expect(ofType(await runEvents(t, id, runId), 'provider_retry')).toEqual([]);
  });

  it('a Retry-After past the cap waits the cap, and a cancel during the wait ends the run at once', async () => {
    const t = await server(2);
    const id = await createSession(t);
    t.fake.script({ error: { status: 503, message: 'maintenance', headers: { 'retry-after': '600' } } });
    const runId = await startRun(t, id, 'hello');
    let retry: Record<string, unknown> | undefined;
    await eventually(async () => {
      retry = ofType(await runEvents(t, id, runId), 'provider_retry')[0]?.payload as
        Record<string, unknown> | undefined;
      return retry !== undefined;
    }, 'the provider_retry event');
    expect(retry).toMatchObject({ attempt: 1, status: 503, delay_ms: MAX_RETRY_AFTER_MS });
    const cancelled = Date.now();
    await request(t.url).post(`/v1/sessions/${id}/runs/${runId}/cancel`).send().expect(200);
    await eventually(async () => (await getRun(t, id, runId)).status === 'cancelled', 'the run to be cancelled', 5_000);
    expect(Date.now() - cancelled).toBeLessThan(3_000);
    t.fake.assertDone();
    expect(t.fake.requests).toHaveLength(1);
  });

  it('the circuit breaker counts failed calls, not requests; when open one probe request decides', async () => {
    const t = await server(1);
    const id = await createSession(t, { circuitBreakerThreshold: 2 });
    const down = (n: number) => ({ error: { status: 502, message: `down ${n}` } });
    t.fake.script(down(1), down(2));
    const first = await runAndWait(t, id, 'one');
    expect(first.run.error).toMatchObject({ code: 'PROVIDER_ERROR', status: 502 });
    t.fake.script(down(3), down(4));
    const second = await runAndWait(t, id, 'two');
    expect(second.run.error).toMatchObject({ code: 'CIRCUIT_BREAKER_OPEN', status: 502 });
    expect(second.run.error?.message).toContain('circuitBreakerThreshold 2');
    expect(t.fake.requests).toHaveLength(4);
    // Open: one probe, no retries.
    t.fake.script(down(5));
    const third = await runAndWait(t, id, 'three');
    expect(third.run.error).toMatchObject({ code: 'CIRCUIT_BREAKER_OPEN', status: 502 });
    expect(t.fake.requests).toHaveLength(5);
    expect(ofType(await runEvents(t, id, third.runId), 'provider_retry')).toEqual([]);
    // A probe that succeeds closes it: the next failure is retried again.
    t.fake.script({ text: 'Back.' }, down(6), { text: 'Recovered.' });
    expect((await runAndWait(t, id, 'four')).run.status).toBe('completed');
    const fifth = await runAndWait(t, id, 'five');
    expect(fifth.run.status).toBe('completed');
    expect(ofType(await runEvents(t, id, fifth.runId), 'provider_retry').map((e) => e.payload.attempt)).toEqual([1]);
    t.fake.assertDone();
  });
});

describe('retryAfterMs', () => {
  const headers = (entries: Record<string, string>) => new Headers(entries);
  it.each([
    [{ 'retry-after': '2' }, 2000],
    [{ 'retry-after': '0.5' }, 500],
    [{ 'retry-after-ms': '150', 'retry-after': '9' }, 150],
    [{ 'retry-after': 'Wed, 02 Dec 2026 12:00:05 GMT' }, 5000],
    [{ 'retry-after': 'Wed, 02 Dec 2026 11:00:00 GMT' }, 0],
    [{ 'retry-after': 'soon' }, undefined],
    [{}, undefined],
  ])('%j -> %s', (entries, expected) => {
    expect(retryAfterMs(headers(entries), Date.parse('2026-12-02T12:00:00Z'))).toBe(expected);
  });
});

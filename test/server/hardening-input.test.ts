import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, startCapturedServer, type CapturedServer } from './hardening-helpers.js';

describe('limits.maxInputBytes bounds a run input before anything runs', () => {
  let t: CapturedServer;
  let sessionId: string;
  beforeAll(async () => {
    t = await startCapturedServer();
    const res = await fetch(`${t.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    sessionId = ((await res.json()) as { session: { id: string } }).session.id;
  });
  afterAll(async () => t.close());

  const history = async () =>
    (await (await fetch(`${t.url}/v1/sessions/${sessionId}/history`)).json()) as { messages: unknown[] };
  const run = (input: string) =>
    fetch(`${t.url}/v1/sessions/${sessionId}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input, wait: true }),
    });

  it('a 1 MB input: 413 PAYLOAD_TOO_LARGE naming limits.maxInputBytes and the field, no provider call, transcript unchanged', async () => {
    const before = await history();
    const res = await run('x'.repeat(1_000_000));
    expect(res.status).toBe(413);
    const error = errorOf(await res.json());
    expect(error?.code).toBe('PAYLOAD_TOO_LARGE');
    expect(error?.message).toContain('limits.maxInputBytes');
    expect(error?.details).toEqual({
      field: 'input',
      limit: 'limits.maxInputBytes',
      maxBytes: 262_144,
      bytes: 1_000_000,
    });
    expect(t.fake.requests).toHaveLength(0);
    expect(await history()).toEqual(before);
    const runs = (await (await fetch(`${t.url}/v1/sessions/${sessionId}/runs`)).json()) as { runs: unknown[] };
    expect(runs.runs).toEqual([]);
  });

  it('counts UTF-8 bytes, not characters', async () => {
    // 131,073 characters of two bytes each: 262,146 bytes, two over the bound.
    const res = await run('é'.repeat(131_073));
    expect(res.status).toBe(413);
    expect(errorOf(await res.json())?.details).toMatchObject({ field: 'input', bytes: 262_146 });
    expect(t.fake.requests).toHaveLength(0);
  });

  it('an input of exactly limits.maxInputBytes runs', async () => {
    t.fake.script({ text: 'ok' });
    const res = await run('é'.repeat(131_072));
    expect(res.status).toBe(200);
    expect(t.fake.requests).toHaveLength(1);
  });
});

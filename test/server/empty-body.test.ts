import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, startCapturedServer, type CapturedServer } from './hardening-helpers.js';

// Routes whose body schema turns `{}` into `{}` skip the parse for an empty body: the answer must be the parse's.
describe('an empty JSON body', () => {
  let t: CapturedServer;
  beforeAll(async () => {
    t = await startCapturedServer();
  });
  afterAll(async () => t.close());

  const post = (path: string, body: string | undefined) =>
    fetch(`${t.url}${path}`, {
      method: 'POST',
      ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body } : {}),
    });
  const info = async (res: Response) => ((await res.json()) as { session: Record<string, unknown> }).session;

  it('creates the same session as a body-less POST /v1/sessions, and the same as the full parse of {"autoSave":false}', async () => {
    const empty = await info(await post('/v1/sessions', '{}'));
    const none = await info(await post('/v1/sessions', undefined));
    const parsed = await info(await post('/v1/sessions', '{"autoSave":false}'));
    const comparable = (s: Record<string, unknown>) => ({
      ...s,
      id: undefined,
      createdAt: undefined,
      updatedAt: undefined,
      createdAtMs: undefined,
      updatedAtMs: undefined,
    });
    expect(comparable(empty)).toEqual(comparable(none));
    expect(comparable(empty)).toEqual(comparable(parsed));
    expect(empty.model).toBe(none.model);
  });

  it('an array or a wrong field is still refused by the schema, naming the field', async () => {
    const array = await post('/v1/sessions', '[]');
    expect(array.status).toBe(400);
    expect(errorOf(await array.json())?.code).toBe('VALIDATION_ERROR');
    const wrong = await post('/v1/sessions', '{"model":5}');
    expect(wrong.status).toBe(400);
    expect(errorOf(await wrong.json())?.message).toMatch(/^body\.model: /);
  });

  it('a route whose schema refuses {} answers 400 for an empty body (no shortcut)', async () => {
    const created = await info(await post('/v1/sessions', '{}'));
    const res = await post(`/v1/sessions/${String(created.id)}/runs`, '{}');
    expect(res.status).toBe(400);
    expect(errorOf(await res.json())?.message).toMatch(/^body\.input: /);
    expect(t.fake.requests).toHaveLength(0);
  });
});

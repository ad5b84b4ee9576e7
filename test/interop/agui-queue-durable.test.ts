import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/** Every file under `dir` whose name is `name`. */
function findFiles(dir: string, name: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name === name)
    .map((e) => join(e.parentPath, e.name));
}

describe('AG-UI: a queued run is announced once it is durable', () => {
  let fake: FakeProvider;
  let t: TestServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    t = await startTestServer({ fake });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('RUN_STARTED of an enqueued run comes after the snapshot that lists it is on disk', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({ autoSave: true }).expect(201)).body.session.id;
    fake.script({ hang: true }, { text: 'queued one ran' });
    const body = (runId: string, content: string, forwardedProps?: unknown) => ({
      threadId: id,
      runId,
      messages: [{ id: runId, role: 'user', content }],
      ...(forwardedProps !== undefined ? { forwardedProps } : {}),
    });
    const busy = fetch(`${t.url}/v1/agui/${id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(body('busy-1', 'hang on')),
    });
    await fake.waitForRequests(1);
    const queued = await fetch(`${t.url}/v1/agui/${id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(body('queued-1', 'after it', { multitaskStrategy: 'enqueue' })),
    });
    expect(queued.status).toBe(200);
    const reader = queued.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('RUN_STARTED');
    // Read the store at once, before anything else can save: the queued run (its Idempotency-Key is the AG-UI
    // runId) is already in the session's snapshot.
    const files = findFiles(t.dataDir, `${id}.json`);
    expect(files).toHaveLength(1);
    const snapshot = readFileSync(files[0]!, 'utf8');
    expect(snapshot).toContain('queued-1');
    expect(snapshot).toContain('"queued"');
    // The busy run is cancelled; the queued one runs to its end.
    const runs = (await request(t.url).get(`/v1/sessions/${id}/runs`).expect(200)).body.runs as {
      runId: string;
      status: string;
    }[];
    const running = runs.find((r) => r.status !== 'queued')!;
    await request(t.url).post(`/v1/sessions/${id}/runs/${running.runId}/cancel`).expect(200);
    let rest = first;
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      rest += new TextDecoder().decode(chunk.value);
    expect(rest).toContain('queued one ran');
    expect(rest).toContain('RUN_FINISHED');
    await (await busy).text();
    fake.assertDone();
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { startTestServer, tempDir } from '../support/test-server.js';

async function replayOnce(root: string) {
  const dataDir = tempDir('a3s-replay-');
  const t = await startTestServer({ root, dataDir });
  try {
    const created = await request(t.url)
      .post('/v1/sessions')
      .send({ sessionId: 'replay', hostEnv: { sequentialIdPrefix: 'r', fixedTimeMs: 1_700_000_000_000 } })
      .expect(201);
    t.fake.script(
      { toolCalls: [{ id: 'call_1', name: 'read', arguments: { file_path: 'data.txt' } }] },
      { text: 'the data says 42', chunks: 4 },
    );
    const run = await request(t.url)
      .post('/v1/sessions/replay/runs')
      .send({ input: 'what does the data say?', wait: true })
      .expect(200);
    const events = (
      await request(t.url).get(`/v1/sessions/replay/runs/${run.body.runId}/events?after=-1&limit=1000`).expect(200)
    ).body.events;
    await request(t.url).post('/v1/sessions/replay/save').expect(200);
    const snapshot = readFileSync(join(dataDir, 'sessions', 'default', 'replay.json'), 'utf8');
    t.fake.assertDone();
    // The one input that differs between the two servers: the fake provider's port, in agent_end.meta.request_url.
    const local = (text: string) => text.split(t.fake.baseUrl).join('<provider>');
    return {
      session: created.body.session,
      run: run.body,
      events: JSON.parse(local(JSON.stringify(events))),
      snapshot: local(snapshot),
    };
  } finally {
    await t.close();
  }
}

describe('HostEnv replay', () => {
  it('a sequential id generator and a fixed clock make a replayed run bit-identical: events and snapshot', async () => {
    const root = tempDir('a3s-ws-');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(root, 'data.txt'), '42\n');
    const first = await replayOnce(root);
    const second = await replayOnce(root);
    expect(first.run.runId).toBe('r-run-1');
    expect(first.events.length).toBeGreaterThan(10);
    expect(
      first.events.every((e: { metadata: { timestamp_ms: number } }) => e.metadata.timestamp_ms === 1_700_000_000_000),
    ).toBe(true);
    expect(JSON.stringify(second.events)).toBe(JSON.stringify(first.events));
    expect(second.run).toEqual(first.run);
    expect(second.snapshot).toBe(first.snapshot);
  });
});

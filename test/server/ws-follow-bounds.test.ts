import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { runEvents } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { subscribe } from '../support/ws-client.js';
import { redisServerConfig } from '../support/redis-target.js';

// A WebSocket on node B that follows a session node A owns (two in-process servers on the shared test
// Redis): its events come through the session's Redis stream, which A bounds with MAXLEN ~ limits.maxEventsPerRun.

const isEndOf = (runId: string) => (e: EventEnvelope) => e.type === 'agent_end' && e.metadata.run_id === runId;
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/**
 * Run short runs on `owner` until `node` has closed a stalled socket (it holds `open` sockets then): a
 * stalled follower is closed once a window of events is appended after it stopped taking them in, and
 * when exactly it stopped depends on timing. Returns the run ids.
 */
async function runUntilClosed(
  fake: FakeProvider,
  owner: TestServer,
  sessionId: string,
  node: TestServer,
  open: number,
): Promise<string[]> {
  const runIds: string[] = [];
  for (let run = 0; run < 5 && node.server.sockets.size > open; run += 1) {
    fake.script({ text: 'z'.repeat(40), chunks: 40 });
    runIds.push(
      (
        await request(owner.url)
          .post(`/v1/sessions/${sessionId}/runs`)
          .send({ input: `more ${run}`, wait: true })
          .expect(200)
      ).body.runId as string,
    );
    // A closed peer that stopped reading cannot answer the closing handshake: it is cut off after CLOSE_GRACE_MS.
    for (let i = 0; i < 30 && node.server.sockets.size > open; i += 1)
      await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(node.server.sockets.size).toBe(open);
  return runIds;
}

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
    // No peer_urls: these nodes forward nothing, so a socket on B follows A's stream (the path measured here).
    const shared = {
      ...redisServerConfig(),
      cluster: { peerUrls: [] },
      redisKeyPrefix: `a3s-fbound-${Math.random().toString(36).slice(2)}:`,
    };
    const a = await startTestServer({ fake, config: { ...shared, nodeId: 'node-a', ...configA } });
    opened.nodes.push(a);
    const b = await startTestServer({ fake, config: { ...shared, nodeId: 'node-b', ...configB } });
    opened.nodes.push(b);
    return { fake, a, b };
  };
}

describe("a WebSocket following another node's session: retention and bounds", () => {
  const twoNodes = useTwoNodes();

  it('a cursor older than the stream retains gets a replay_gap control frame first, then the retained events in order', async () => {
    // A bounds each session stream with MAXLEN ~ 10; Redis trims whole 100-entry nodes, so 130 events leave a hole at the start.
    const { fake, a, b } = await twoNodes({ limits: { maxEventsPerRun: 10 } }, {});
    await request(a.url).post('/v1/sessions').send({ sessionId: 'gap', autoSave: true }).expect(201);
    const chunks = 130;
    fake.script({ text: 'x'.repeat(chunks), chunks });
    const runId = (await request(a.url).post('/v1/sessions/gap/runs').send({ input: 'long', wait: true }).expect(200))
      .body.runId as string;
    const last = (await runEvents(a, 'gap', runId)).at(-1)?.metadata.session_sequence ?? 0;
    expect(last).toBeGreaterThan(chunks);

    const late = await subscribe(b.url, 'gap', { after: 0 });
    await late.waitFor(isEndOf(runId));
    const [gap, ...rest] = late.frames;
    expect(gap).toEqual({
      version: 1,
      type: 'replay_gap',
      payload: { requested_after: 0, first_available: expect.any(Number) },
      metadata: {},
    });
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
    const next = (await request(a.url).post('/v1/sessions/gap/runs').send({ input: 'again', wait: true }).expect(200))
      .body.runId as string;
    await late.waitFor(isEndOf(next));
    expect(late.controls.map((c) => c.type)).toEqual(['replay_gap']);
    expect(late.sequences()).toEqual(range(first, late.cursor() ?? 0));
    expect(late.cursor()).toBeGreaterThan(last);
    late.close();
    inside.close();
    fake.assertDone();
  });

  it('closes a follower that stopped reading with 4008 after its window, while a reader on the same node gets every event in order; it resumes from its cursor', async () => {
    const { fake, a, b } = await twoNodes({}, { limits: { subscriberBufferEvents: 16 } });
    await request(a.url).post('/v1/sessions').send({ sessionId: 'slow', autoSave: true }).expect(201);
    fake.script({ text: 'first' });
    const first = (await request(a.url).post('/v1/sessions/slow/runs').send({ input: 'one', wait: true }).expect(200))
      .body.runId as string;
    const reader = await subscribe(b.url, 'slow', { after: 0 });
    const stalled = await subscribe(b.url, 'slow', { after: 0 });
    // Both are following A's stream once they replayed the first run; then one stops reading.
    await reader.waitFor(isEndOf(first));
    await stalled.waitFor(isEndOf(first));
    const read = stalled.cursor() ?? 0;
    stalled.pause();
    const chunks = 200;
    fake.script({ text: 'y'.repeat(chunks), chunks });
    const runId = (await request(a.url).post('/v1/sessions/slow/runs').send({ input: 'long', wait: true }).expect(200))
      .body.runId as string;
    await reader.waitFor(isEndOf(runId));

    // Far more events than the subscriber bound, every one delivered to the reader as A recorded them.
    const recorded = (await runEvents(a, 'slow', runId)).map((e) => e.metadata.session_sequence);
    expect(recorded.length).toBeGreaterThan(16 * 4);
    expect(reader.sequences()).toEqual(range(1, recorded.at(-1) ?? 0));
    expect(reader.sequences().slice(-recorded.length)).toEqual(recorded);

    // Events appended while the stalled follower's window is full and unacknowledged: a window of them closes it
    // (before it reads again), while the reader goes on.
    const next = (await runUntilClosed(fake, a, 'slow', b, 1)).at(-1) ?? runId;
    const end = await reader.waitFor(isEndOf(next));
    const last = end.metadata.session_sequence;
    expect(reader.sequences()).toEqual(range(1, last));
    expect(reader.controls).toEqual([]);
    expect(reader.socket.readyState).toBe(reader.socket.OPEN);
    stalled.resume();
    const closed = await stalled.waitClosed();
    expect(closed.code).toBe(4008);
    expect(closed.reason).toContain('16 frames unacknowledged (limits.subscriberBufferEvents)');
    // At most one window past what it had read (and acknowledged) before it stopped, in order, no control frames.
    const cursor = stalled.cursor() ?? 0;
    expect(cursor).toBeGreaterThan(read);
    expect(cursor).toBeLessThanOrEqual(read + 16);
    expect(stalled.frames).toHaveLength(cursor);
    expect(stalled.sequences()).toEqual(range(1, cursor));

    // It resumes from its cursor on the same node: everything after it, in order, paced by acknowledgements.
    const again = await subscribe(b.url, 'slow', { after: cursor });
    await again.waitFor(isEndOf(next));
    expect(again.sequences()).toEqual(range(cursor + 1, last));
    expect(again.controls).toEqual([]);
    expect(again.socket.readyState).toBe(again.socket.OPEN);
    again.close();
    reader.close();
    fake.assertDone();
  });

  it('holds one window for a follower that never reads its replay, and closes it with 4008 once a window of new events goes unread', async () => {
    const { fake, a, b } = await twoNodes({}, { limits: { subscriberBufferEvents: 16 } });
    await request(a.url).post('/v1/sessions').send({ sessionId: 'stall', autoSave: true }).expect(201);
    fake.script({ text: 'a'.repeat(40), chunks: 40 });
    await request(a.url).post('/v1/sessions/stall/runs').send({ input: 'one', wait: true }).expect(200);

    const stalled = await subscribe(b.url, 'stall', { after: 0, pauseOnOpen: true });
    const watcher = await subscribe(b.url, 'stall', { after: 0 });
    const runIds = await runUntilClosed(fake, a, 'stall', b, 1);
    const end = await watcher.waitFor(isEndOf(runIds.at(-1) ?? ''));
    expect(watcher.sequences()).toEqual(range(1, end.metadata.session_sequence));
    expect(watcher.socket.readyState).toBe(watcher.socket.OPEN);
    stalled.resume();
    const closed = await stalled.waitClosed();
    expect(closed.code).toBe(4008);
    expect(closed.reason).toContain('limits.subscriberBufferEvents');
    expect(stalled.frames.map((f) => f.metadata.session_sequence)).toEqual(range(1, 16));
    watcher.close();
    fake.assertDone();
  });
});

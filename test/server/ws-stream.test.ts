import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { useTestServers } from '../support/run-helpers.js';
import { subscribe, type EventSubscriber } from '../support/ws-client.js';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const isEndOf = (runId: string) => (e: EventEnvelope) => e.type === 'agent_end' && e.metadata.run_id === runId;

/** Events of a text-only run: agent_start, run_status_changed, context_resolving, context_resolved, run_capability_bound, turn_start, model_presentation_bound, model_input_bound, one text_delta per chunk, model_usage_bound, turn_end, run_status_changed, agent_end. */
const eventsOfTextRun = (chunks: number) => chunks + 12;

/** Wait until the session has no active run (the lease is released after the producer's autosave). */
async function waitIdle(url: string, sessionId: string): Promise<void> {
  for (let i = 0; i < 500; i += 1) {
    const info = (await request(url).get(`/v1/sessions/${sessionId}`).expect(200)).body.session;
    if (!info.busy) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`session ${sessionId} stayed busy`);
}

/** Resolve once a ping round trip completes: every frame the server sent before it has been received. */
async function settle(sub: EventSubscriber): Promise<void> {
  const pongs = sub.controls.filter((c) => c.type === 'pong').length;
  sub.send({ type: 'ping' });
  await sub.waitFor(() => sub.controls.filter((c) => c.type === 'pong').length > pongs);
}

describe('WebSocket event stream: replay, live, gaps', () => {
  const start = useTestServers();

  it('replays from a cursor then streams live across two runs: mid-run joiners and a mid-run reconnect see no gap and no duplicate', async () => {
    const t = await start();
    await request(t.url).post('/v1/sessions').send({ sessionId: 's-stream' }).expect(201);
    const fromStart = await subscribe(t.url, 's-stream', { after: 0 });
    const early = await subscribe(t.url, 's-stream', { after: 0 });

    // Run 1 streams 60 chunks slowly, so joiners can attach while it is in flight.
    const chunks1 = 60;
    t.fake.script({ text: 'a'.repeat(chunks1), chunks: chunks1, chunkDelayMs: 20 });
    const run1 = (await request(t.url).post('/v1/sessions/s-stream/runs').send({ input: 'one' }).expect(202)).body
      .runId as string;
    await fromStart.waitFor((e) => e.type === 'text_delta' && (e.metadata.sequence ?? 0) >= 8);

    // One subscriber connects while the run is streaming and replays from 0; another is live-only.
    const joiner = await subscribe(t.url, 's-stream', { after: 0 });
    const liveOnly = await subscribe(t.url, 's-stream');
    // Both upgrades completed while the run was still active.
    expect((await request(t.url).get('/v1/sessions/s-stream').expect(200)).body.session.busy).toBe(true);

    // `early` drops its connection mid-run and reconnects with its last cursor.
    await early.waitFor((e) => e.metadata.run_id === run1 && (e.metadata.sequence ?? 0) >= 14);
    early.close();
    await early.waitClosed();
    const cursor = early.cursor() ?? 0;
    expect(cursor).toBeGreaterThanOrEqual(15);
    const resumed = await subscribe(t.url, 's-stream', { after: cursor });
    expect((await request(t.url).get('/v1/sessions/s-stream').expect(200)).body.session.busy).toBe(true);

    await Promise.all([fromStart, joiner, liveOnly, resumed].map((s) => s.waitFor(isEndOf(run1))));
    await waitIdle(t.url, 's-stream');

    // Run 2, watched by the same subscribers.
    const chunks2 = 5;
    t.fake.script({ text: 'b'.repeat(chunks2), chunks: chunks2 });
    const run2 = (
      await request(t.url).post('/v1/sessions/s-stream/runs').send({ input: 'two', wait: true }).expect(200)
    ).body.runId as string;
    await Promise.all([fromStart, joiner, liveOnly, resumed].map((s) => s.waitFor(isEndOf(run2))));
    t.fake.assertDone();

    const total = eventsOfTextRun(chunks1) + eventsOfTextRun(chunks2);
    expect(fromStart.sequences()).toEqual(range(1, total));
    expect(joiner.sequences()).toEqual(range(1, total));
    expect([...early.sequences(), ...resumed.sequences()]).toEqual(range(1, total));
    expect(resumed.sequences()[0]).toBe(cursor + 1);
    // Live-only: it starts somewhere inside run 1 and is consecutive from there.
    const live = liveOnly.sequences();
    expect(live[0]).toBeGreaterThan(1);
    expect(live).toEqual(range(live[0], total));
    // No control frames in a healthy stream.
    for (const s of [fromStart, joiner, liveOnly, resumed]) expect(s.controls).toEqual([]);

    // Per-run sequences restart at 0 for run 2; session sequences continue.
    const run2Events = fromStart.events.filter((e) => e.metadata.run_id === run2);
    expect(run2Events.map((e) => e.metadata.sequence)).toEqual(range(0, eventsOfTextRun(chunks2) - 1));
    expect(run2Events[0].metadata.session_sequence).toBe(eventsOfTextRun(chunks1) + 1);
    expect(fromStart.events.map((e) => e.type).slice(0, 8)).toEqual([
      'agent_start',
      'run_status_changed',
      'context_resolving',
      'context_resolved',
      'run_capability_bound',
      'turn_start',
      'model_presentation_bound',
      'model_input_bound',
    ]);
  });

  it('without `after` the socket is live only', async () => {
    const t = await start();
    await request(t.url).post('/v1/sessions').send({ sessionId: 's-live' }).expect(201);
    t.fake.script({ text: 'first' });
    await request(t.url).post('/v1/sessions/s-live/runs').send({ input: 'one', wait: true }).expect(200);
    await waitIdle(t.url, 's-live');

    const live = await subscribe(t.url, 's-live');
    await settle(live);
    expect(live.events).toEqual([]);

    t.fake.script({ text: 'second', chunks: 2 });
    const run2 = (await request(t.url).post('/v1/sessions/s-live/runs').send({ input: 'two', wait: true }).expect(200))
      .body.runId as string;
    await live.waitFor(isEndOf(run2));
    const first = eventsOfTextRun(1);
    expect(live.sequences()).toEqual(range(first + 1, first + eventsOfTextRun(2)));
    expect(new Set(live.events.map((e) => e.metadata.run_id))).toEqual(new Set([run2]));

    // after=0 replays everything retained; a cursor at the head replays nothing.
    const all = await subscribe(t.url, 's-live', { after: 0 });
    const head = await subscribe(t.url, 's-live', { after: first + eventsOfTextRun(2) });
    await settle(all);
    await settle(head);
    expect(all.sequences()).toEqual(range(1, first + eventsOfTextRun(2)));
    expect(head.events).toEqual([]);
  });

  it('starts with a replay_gap control frame when the cursor is older than what is retained, and the run events page reports the gap', async () => {
    const t = await start();
    await request(t.url)
      .post('/v1/sessions')
      .send({ sessionId: 's-gap', retentionLimits: { maxEventsPerRun: 5 } })
      .expect(201);
    const chunks = 20;
    t.fake.script({ text: 'x'.repeat(chunks), chunks });
    const run1 = (await request(t.url).post('/v1/sessions/s-gap/runs').send({ input: 'one', wait: true }).expect(200))
      .body.runId as string;
    await waitIdle(t.url, 's-gap');
    const total1 = eventsOfTextRun(chunks);

    const sub = await subscribe(t.url, 's-gap', { after: 0 });
    await sub.waitFor(isEndOf(run1));
    const [gap, ...rest] = sub.frames;
    expect(gap).toEqual({
      version: 1,
      type: 'replay_gap',
      payload: { requested_after: 0, first_available: total1 - 4 },
      metadata: {},
    });
    expect(rest.map((f) => f.metadata.session_sequence)).toEqual(range(total1 - 4, total1));

    // A cursor inside the retained window: no gap.
    const inside = await subscribe(t.url, 's-gap', { after: total1 - 2 });
    await inside.waitFor(isEndOf(run1));
    expect(inside.frames.map((f) => f.metadata.session_sequence)).toEqual([total1 - 1, total1]);

    // The run events page reports the same retention gap in per-run sequences.
    const page = (await request(t.url).get(`/v1/sessions/s-gap/runs/${run1}/events?after=-1&limit=3`).expect(200)).body;
    expect(page.retentionGap).toEqual({ firstAvailableSequence: total1 - 5 });
    expect(page.events.map((e: EventEnvelope) => e.metadata.sequence)).toEqual([total1 - 5, total1 - 4, total1 - 3]);
    expect(page.nextAfter).toBe(total1 - 3);
    const next = (
      await request(t.url).get(`/v1/sessions/s-gap/runs/${run1}/events?after=${page.nextAfter}&limit=3`).expect(200)
    ).body;
    expect(next.retentionGap).toBeNull();
    expect(next.events.map((e: EventEnvelope) => e.metadata.sequence)).toEqual([total1 - 2, total1 - 1]);
    expect(next.nextAfter).toBeNull();
    const run = (await request(t.url).get(`/v1/sessions/s-gap/runs/${run1}`).expect(200)).body.run;
    expect(run).toMatchObject({ eventCount: total1, firstRetainedSequence: total1 - 5 });

    // A second run: the hole inside the replay (run 2's dropped head) is announced where it occurs.
    t.fake.script({ text: 'y'.repeat(chunks), chunks });
    const run2 = (await request(t.url).post('/v1/sessions/s-gap/runs').send({ input: 'two', wait: true }).expect(200))
      .body.runId as string;
    await sub.waitFor(isEndOf(run2));
    const total2 = total1 + eventsOfTextRun(chunks);
    const replay = await subscribe(t.url, 's-gap', { after: 0 });
    await replay.waitFor(isEndOf(run2));
    const shape = replay.frames.map((f) =>
      f.type === 'replay_gap'
        ? `gap ${String(f.payload.requested_after)}->${String(f.payload.first_available)}`
        : f.metadata.session_sequence,
    );
    expect(shape).toEqual([
      `gap 0->${total1 - 4}`,
      ...range(total1 - 4, total1),
      `gap ${total1}->${total2 - 4}`,
      ...range(total2 - 4, total2),
    ]);
    // The live subscriber saw run 2 whole: retention drops stored events, never live delivery.
    expect(sub.sequences()).toEqual([...range(total1 - 4, total1), ...range(total1 + 1, total2)]);
  });
});

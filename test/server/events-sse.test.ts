import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { useTestServers } from '../support/run-helpers.js';
import { openSse } from '../support/sse-client.js';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const isEndOf = (runId: string) => (e: EventEnvelope) => e.type === 'agent_end' && e.metadata.run_id === runId;
/** Events of a text-only run: agent_start, run_status_changed, context_resolving, context_resolved, run_capability_bound, turn_start, model_presentation_bound, model_input_bound, one text_delta per chunk, model_usage_bound, turn_end, run_status_changed, agent_end. */
const eventsOfTextRun = (chunks: number) => chunks + 12;

describe('SSE on GET /v1/sessions/:id/events', () => {
  const start = useTestServers();

  it('serves the WebSocket frames as SSE; a reader cut mid-run resumes with Last-Event-ID and sees every event once, in order', async () => {
    const t = await start();
    await request(t.url).post('/v1/sessions').send({ sessionId: 'sse-1' }).expect(201);
    const first = await openSse(`${t.url}/v1/sessions/sse-1/events?after=0`);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(first.headers.get('cache-control')).toContain('no-cache');

    const chunks = 60;
    t.fake.script({ text: 'a'.repeat(chunks), chunks, chunkDelayMs: 15 });
    const runId = (await request(t.url).post('/v1/sessions/sse-1/runs').send({ input: 'one' }).expect(202)).body
      .runId as string;
    await first.waitFor((e) => e.type === 'text_delta' && (e.metadata.sequence ?? 0) >= 10);
    first.abort();
    await first.ended;
    const cursor = first.lastId();
    expect(Number(cursor)).toBeGreaterThanOrEqual(11);
    // Still running: the resume happens mid-run.
    expect((await request(t.url).get('/v1/sessions/sse-1').expect(200)).body.session.busy).toBe(true);

    // ?after=0 stays in the URL (as EventSource keeps it): Last-Event-ID wins.
    const resumed = await openSse(`${t.url}/v1/sessions/sse-1/events?after=0`, { 'last-event-id': String(cursor) });
    await resumed.waitFor(isEndOf(runId));
    const all = [...first.events(), ...resumed.events()];
    expect(all.map((e) => e.metadata.session_sequence)).toEqual(range(1, eventsOfTextRun(chunks)));
    // Each frame: id = session_sequence, event = type, data = the envelope.
    for (const frame of [...first.frames, ...resumed.frames].filter((f) => f.data !== undefined)) {
      const envelope = JSON.parse(frame.data ?? '') as EventEnvelope;
      expect(frame.id).toBe(String(envelope.metadata.session_sequence));
      expect(frame.event).toBe(envelope.type);
      expect(envelope.version).toBe(1);
    }
    resumed.abort();
  });

  it('a live-only reader (no cursor) gets the events appended after it attached', async () => {
    const t = await start();
    await request(t.url).post('/v1/sessions').send({ sessionId: 'sse-live' }).expect(201);
    t.fake.script({ text: 'before' });
    await request(t.url).post('/v1/sessions/sse-live/runs').send({ input: 'one', wait: true }).expect(200);
    const live = await openSse(`${t.url}/v1/sessions/sse-live/events`);
    t.fake.script({ text: 'after' });
    const run2 = (
      await request(t.url).post('/v1/sessions/sse-live/runs').send({ input: 'two', wait: true }).expect(200)
    ).body.runId as string;
    await live.waitFor(isEndOf(run2));
    const first = eventsOfTextRun(1) + 1;
    expect(live.events().map((e) => e.metadata.session_sequence)).toEqual(range(first, first + eventsOfTextRun(1) - 1));
    expect(live.events().every((e) => e.metadata.run_id === run2)).toBe(true);
    live.abort();
  });

  it('starts with a replay_gap frame (no id) when retention dropped events', async () => {
    const t = await start();
    await request(t.url)
      .post('/v1/sessions')
      .send({ sessionId: 'sse-gap', retentionLimits: { maxEventsPerRun: 5 } })
      .expect(201);
    const chunks = 20;
    t.fake.script({ text: 'x'.repeat(chunks), chunks });
    const runId = (
      await request(t.url).post('/v1/sessions/sse-gap/runs').send({ input: 'one', wait: true }).expect(200)
    ).body.runId as string;
    const total = eventsOfTextRun(chunks);
    const reader = await openSse(`${t.url}/v1/sessions/sse-gap/events`, { 'last-event-id': '0' });
    await reader.waitFor(isEndOf(runId));
    const [gapFrame, ...rest] = reader.frames.filter((f) => f.data !== undefined);
    expect(gapFrame?.id).toBeUndefined();
    expect(gapFrame?.event).toBe('replay_gap');
    expect(JSON.parse(gapFrame?.data ?? '')).toEqual({
      version: 1,
      type: 'replay_gap',
      payload: { requested_after: 0, first_available: total - 4 },
      metadata: {},
    });
    expect(rest.map((f) => Number(f.id))).toEqual(range(total - 4, total));
    reader.abort();
  });

  it('sends a heartbeat comment every limits.sseHeartbeatMs', async () => {
    const t = await start({ config: { limits: { sseHeartbeatMs: 100 } } });
    await request(t.url).post('/v1/sessions').send({ sessionId: 'sse-beat' }).expect(201);
    const reader = await openSse(`${t.url}/v1/sessions/sse-beat/events`);
    await reader.waitForComment((c) => c === 'ping', 3000);
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(reader.comments().filter((c) => c === 'ping').length).toBeGreaterThanOrEqual(2);
    expect(reader.events()).toEqual([]);
    reader.abort();
  });

  it('answers bad input and unknown sessions in the one error shape before the stream starts', async () => {
    const t = await start();
    await request(t.url).post('/v1/sessions').send({ sessionId: 'sse-err' }).expect(201);
    const badId = await openSse(`${t.url}/v1/sessions/sse-err/events`, { 'last-event-id': 'abc' });
    expect(badId.status).toBe(400);
    expect(badId.body).toMatchObject({
      error: { code: 'VALIDATION_ERROR', message: expect.stringContaining('headers.last-event-id') },
    });
    const badAfter = await openSse(`${t.url}/v1/sessions/sse-err/events?after=-1`);
    expect(badAfter.status).toBe(400);
    expect(badAfter.body).toMatchObject({
      error: { code: 'VALIDATION_ERROR', message: expect.stringContaining('query.after') },
    });
    const token = await openSse(`${t.url}/v1/sessions/sse-err/events?token=secret`);
    expect(token.status).toBe(400);
    expect(token.body).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
    const missing = await openSse(`${t.url}/v1/sessions/nobody/events`);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: { code: 'SESSION_NOT_FOUND' } });
    await request(t.url)
      .delete('/v1/sessions/sse-err')
      .expect((r) => expect(r.status).toBeLessThan(300));
    const closed = await openSse(`${t.url}/v1/sessions/sse-err/events`);
    expect([404, 410]).toContain(closed.status);
    // Without the SSE Accept header the route is still the WebSocket's.
    await request(t.url).get('/v1/sessions/sse-err/events').expect(426);
  });

  it('ends the streams on shutdown with a close comment (the reader reconnects elsewhere)', async () => {
    const t = await start();
    await request(t.url).post('/v1/sessions').send({ sessionId: 'sse-down' }).expect(201);
    const reader = await openSse(`${t.url}/v1/sessions/sse-down/events`);
    await t.close();
    await reader.ended;
    // Shutdown closes the session first (session_closed, `: close 4010`), or ends the stream (`: close 1001`): either way it ends.
    expect(reader.comments().some((c) => /^close (1001|4010) /.test(c))).toBe(true);
  });
});

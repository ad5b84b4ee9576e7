import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { LimitsSchema } from '../../src/config/limits-config.js';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { WsControlFrameSchema } from '../../src/protocol/ws-messages.js';
import { SESSION_CLOSED_DRAIN_MS } from '../../src/routes/events-ws.js';
import { useTestServers } from '../support/run-helpers.js';
import { startTestServer } from '../support/test-server.js';
import { subscribe, type EventSubscriber } from '../support/ws-client.js';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const isEnd = (e: EventEnvelope) => e.type === 'agent_end';

/** Resolve with the next control frame of a type that arrives after `seen` of them. */
async function nextControl(
  sub: EventSubscriber,
  type: string,
  seen = sub.controls.filter((c) => c.type === type).length,
) {
  await sub.waitFor(() => sub.controls.filter((c) => c.type === type).length > seen);
  const frame = sub.controls.filter((c) => c.type === type)[seen];
  // Every control frame the server sends matches its protocol schema.
  expect(WsControlFrameSchema.safeParse(frame).success).toBe(true);
  return frame;
}

describe('WebSocket event stream: client messages and closing', () => {
  const start = useTestServers();

  it('answers ping with pong; invalid JSON and invalid messages get an error frame naming the field and the socket stays open', async () => {
    const t = await start();
    await request(t.url).post('/v1/sessions').send({ sessionId: 's-msg' }).expect(201);
    const sub = await subscribe(t.url, 's-msg');

    sub.send({ type: 'ping' });
    expect(await nextControl(sub, 'pong')).toEqual({ version: 1, type: 'pong', payload: {}, metadata: {} });

    sub.sendRaw('{not json');
    expect((await nextControl(sub, 'error', 0)).payload).toMatchObject({
      code: 'VALIDATION_ERROR',
      field: 'message',
      message: 'message: invalid JSON',
    });

    sub.send({ type: 'subscribe_everything' });
    const unknown = await nextControl(sub, 'error', 1);
    expect(unknown.payload).toMatchObject({ code: 'VALIDATION_ERROR', field: 'message.type' });
    expect(String(unknown.payload.message)).toMatch(/^message\.type: /);

    sub.send({ type: 'cancel' });
    expect((await nextControl(sub, 'error', 2)).payload).toMatchObject({
      code: 'VALIDATION_ERROR',
      field: 'message.runId',
    });

    sub.send({ type: 'ping', extra: true });
    expect((await nextControl(sub, 'error', 3)).payload).toMatchObject({ code: 'VALIDATION_ERROR' });

    sub.send({ type: 'confirm', toolId: 't1', approved: true });
    expect((await nextControl(sub, 'error', 4)).payload).toMatchObject({
      code: 'CONFIRMATION_NOT_FOUND',
      field: 'toolId',
    });

    sub.send({ type: 'cancel', runId: 'run-that-never-was' });
    expect((await nextControl(sub, 'error', 5)).payload).toMatchObject({ code: 'RUN_NOT_FOUND', field: 'runId' });

    sub.send({ type: 'ping' });
    await nextControl(sub, 'pong', 1);
    expect(sub.socket.readyState).toBe(sub.socket.OPEN);
    expect(sub.events).toEqual([]);
  });

  it('cancels the active run on a cancel message', async () => {
    const t = await start();
    await request(t.url).post('/v1/sessions').send({ sessionId: 's-cancel' }).expect(201);
    const sub = await subscribe(t.url, 's-cancel', { after: 0 });
    t.fake.script({ hang: true });
    const runId = (await request(t.url).post('/v1/sessions/s-cancel/runs').send({ input: 'wait forever' }).expect(202))
      .body.runId as string;
    await t.fake.waitForRequests(1);
    sub.send({ type: 'cancel', runId });
    expect((await nextControl(sub, 'cancel_result')).payload).toEqual({ run_id: runId, cancelled: true });
    const end = await sub.waitFor(isEnd);
    expect(end.payload.status).toBe('cancelled');
    for (let i = 0; i < 200; i += 1) {
      if (!(await request(t.url).get('/v1/sessions/s-cancel').expect(200)).body.session.busy) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((await request(t.url).get(`/v1/sessions/s-cancel/runs/${runId}`).expect(200)).body.run.status).toBe(
      'cancelled',
    );
    // Cancelling a run that is no longer active answers false.
    sub.send({ type: 'cancel', runId });
    expect((await nextControl(sub, 'cancel_result', 1)).payload).toEqual({ run_id: runId, cancelled: false });
  });

  it('closes a subscriber that stops reading with 4008 after a bounded number of frames, while the others get everything; it resumes from its cursor', async () => {
    const t = await start({ config: { limits: LimitsSchema.parse({ subscriberBufferEvents: 16 }) } });
    await request(t.url).post('/v1/sessions').send({ sessionId: 's-slow' }).expect(201);
    const stalled = await subscribe(t.url, 's-slow', { after: 0 });
    const healthy = [await subscribe(t.url, 's-slow', { after: 0 }), await subscribe(t.url, 's-slow')];
    stalled.pause();

    // Far more events than the window; spaced a little, so a reading client always keeps up.
    const chunks = 300;
    t.fake.script({ text: 'z'.repeat(chunks), chunks, chunkDelayMs: 2 });
    const runId = (
      await request(t.url).post('/v1/sessions/s-slow/runs').send({ input: 'flood', wait: true }).expect(200)
    ).body.runId as string;
    // A text run: the text deltas and 12 more events (agent_start ... agent_end, the context events, the evidence bindings).
    const total = chunks + 12;
    await Promise.all(healthy.map((s) => s.waitFor(isEnd)));
    for (const s of healthy) {
      expect(s.sequences()).toEqual(range(1, total));
      expect(s.socket.readyState).toBe(s.socket.OPEN);
    }

    // The stalled subscriber was cut off after at most one window of frames.
    stalled.resume();
    const closed = await stalled.waitClosed();
    expect(closed.code).toBe(4008);
    expect(closed.reason).toContain('limits.subscriberBufferEvents');
    const cursor = stalled.cursor() ?? 0;
    expect(stalled.frames.length).toBeLessThanOrEqual(16);
    expect(stalled.sequences()).toEqual(range(1, cursor));

    // It resumes from its last cursor: a replay far longer than the window, paced by acknowledgements.
    const again = await subscribe(t.url, 's-slow', { after: cursor });
    const end = await again.waitFor(isEnd);
    expect(end.metadata.run_id).toBe(runId);
    expect(again.sequences()).toEqual(range(cursor + 1, total));
    expect(again.socket.readyState).toBe(again.socket.OPEN);
  });

  it('holds one window for a subscriber that stalls while replaying, and closes it with 4008 once a window of new events goes unread', async () => {
    const t = await start({ config: { limits: LimitsSchema.parse({ subscriberBufferEvents: 16 }) } });
    await request(t.url).post('/v1/sessions').send({ sessionId: 's-stall' }).expect(201);
    t.fake.script({ text: 'a'.repeat(40), chunks: 40 });
    await request(t.url).post('/v1/sessions/s-stall/runs').send({ input: 'one', wait: true }).expect(200);

    const stalled = await subscribe(t.url, 's-stall', { after: 0, pauseOnOpen: true });
    const watcher = await subscribe(t.url, 's-stall');
    t.fake.script({ text: 'b'.repeat(30), chunks: 30, chunkDelayMs: 2 });
    await request(t.url).post('/v1/sessions/s-stall/runs').send({ input: 'two', wait: true }).expect(200);
    await watcher.waitFor(isEnd);

    stalled.resume();
    const closed = await stalled.waitClosed();
    expect(closed.code).toBe(4008);
    expect(stalled.sequences()).toEqual(range(1, 16));
  });

  it(
    `gives a subscriber still replaying when its session closes ${SESSION_CLOSED_DRAIN_MS} ms, then closes it with 4010`,
    async () => {
      const t = await start({ config: { limits: LimitsSchema.parse({ subscriberBufferEvents: 16 }) } });
      await request(t.url).post('/v1/sessions').send({ sessionId: 's-drain' }).expect(201);
      t.fake.script({ text: 'a'.repeat(40), chunks: 40 });
      await request(t.url).post('/v1/sessions/s-drain/runs').send({ input: 'one', wait: true }).expect(200);
      const stalled = await subscribe(t.url, 's-drain', { after: 0, pauseOnOpen: true });
      const reader = await subscribe(t.url, 's-drain', { after: 0 });
      await reader.waitFor(isEnd);
      const started = Date.now();
      await request(t.url).delete('/v1/sessions/s-drain').expect(200);
      expect((await reader.waitClosed()).code).toBe(4010);
      expect(reader.frames.at(-1)?.type).toBe('session_closed');

      // The stalled one is still connected well before the drain period ends, and cut off after it.
      expect(Date.now() - started).toBeLessThan(SESSION_CLOSED_DRAIN_MS);
      expect(t.server.sockets.size).toBeGreaterThanOrEqual(1);
      for (let i = 0; i < 300 && t.server.sockets.size > 0; i += 1)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(t.server.sockets.size).toBe(0);
      expect(Date.now() - started).toBeGreaterThanOrEqual(SESSION_CLOSED_DRAIN_MS);
      stalled.resume();
      const closed = await stalled.waitClosed();
      expect(closed.code).toBe(4010);
      expect(stalled.sequences()).toEqual(range(1, 16));
    },
    SESSION_CLOSED_DRAIN_MS + 40_000,
  );

  it('closes subscribers with 1001 on shutdown, promptly even when one has stopped reading', async () => {
    const t = await startTestServer();
    await request(t.url).post('/v1/sessions').send({ sessionId: 's-down' }).expect(201);
    const sub = await subscribe(t.url, 's-down', { after: 0 });
    const stalled = await subscribe(t.url, 's-down', { after: 0 });
    t.fake.script({ hang: true });
    await request(t.url).post('/v1/sessions/s-down/runs').send({ input: 'wait forever' }).expect(202);
    await sub.waitFor((e) => e.type === 'turn_start');
    await t.fake.waitForRequests(1);
    stalled.pause();
    // Without a deadline on the closing handshake, the stalled peer would hold shutdown for 30 s.
    await t.close();
    const closed = await sub.waitClosed();
    expect(closed.code).toBe(1001);
    stalled.resume();
    expect((await stalled.waitClosed()).code).toBe(1001);
  });

  it('sends session_closed then closes with 4010 when the session is deleted; later subscribers get 4010 at once', async () => {
    const t = await start();
    await request(t.url).post('/v1/sessions').send({ sessionId: 's-del' }).expect(201);
    t.fake.script({ text: 'done' });
    await request(t.url).post('/v1/sessions/s-del/runs').send({ input: 'x', wait: true }).expect(200);
    const subs = [await subscribe(t.url, 's-del', { after: 0 }), await subscribe(t.url, 's-del')];
    await subs[0].waitFor(isEnd);
    await request(t.url).delete('/v1/sessions/s-del').expect(200);
    for (const sub of subs) {
      expect((await sub.waitClosed()).code).toBe(4010);
      expect(sub.frames.at(-1)?.type).toBe('session_closed');
    }
    expect(subs[0].sequences()).toEqual(range(1, subs[0].cursor() ?? 0));
    expect(subs[1].events.map((e) => e.type)).toEqual(['session_closed']);

    const late = await subscribe(t.url, 's-del', { after: 0 });
    expect((await late.waitClosed()).code).toBe(4010);
    expect(late.frames).toEqual([]);
  });

  it('closes with 4004 for an unknown session and 1008 for an invalid cursor', async () => {
    const t = await start();
    const unknown = await subscribe(t.url, 'nope', { after: 0 });
    expect((await unknown.waitClosed()).code).toBe(4004);
    // A long session id (100 characters, the router's parameter bound): the reason still fits a close frame.
    const long = await subscribe(t.url, 'n'.repeat(100));
    const longClosed = await long.waitClosed();
    expect(longClosed.code).toBe(4004);
    expect(Buffer.byteLength(longClosed.reason)).toBeLessThanOrEqual(123);

    await request(t.url).post('/v1/sessions').send({ sessionId: 's-q' }).expect(201);
    const invalid = await subscribe(t.url, 's-q', { after: -3 });
    const closed = await invalid.waitClosed();
    expect(closed.code).toBe(1008);
    expect(closed.reason).toMatch(/^query\.after: /);
  });
});

import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { createSession, runAndWait, useTestServers } from '../support/run-helpers.js';
import { openSse } from '../support/sse-client.js';
import { subscribe } from '../support/ws-client.js';

// The session's events as the log builds them when they are read (REST pages, trace, replays) must be the
// bytes live subscribers got as the events were appended.
describe('event envelopes on the wire: read back as they went out live', () => {
  const start = useTestServers();

  for (const [name, options, labelKeys] of [
    ["the caller's labels", {}, ['tenant_id', 'principal']],
    ['a correlation id too', { correlationId: 'corr-7' }, ['tenant_id', 'principal', 'correlation_id']],
  ] as const) {
    it(`WebSocket and SSE live, SSE and WebSocket replay, the run's REST pages and the trace carry the same JSON (${name})`, async () => {
      const t = await start({ files: { 'notes.txt': 'hello\n' } });
      const id = await createSession(t, options);
      const ws = await subscribe(t.url, id);
      const sse = await openSse(`${t.url}/v1/sessions/${id}/events`);
      t.fake.script(
        { toolCalls: [{ id: 'c1', name: 'read', arguments: { file_path: 'notes.txt' } }] },
        { text: 'It says hello.', chunks: 4 },
      );
      const { runId } = await runAndWait(t, id, 'What is in notes.txt?');
      await ws.waitFor((e) => e.type === 'agent_end');
      await sse.waitFor((e) => e.type === 'agent_end');
      const live = ws.events.filter((e) => e.metadata.run_id === runId).map((e) => JSON.stringify(e));
      expect(live.length).toBeGreaterThan(10);
      const liveSse = sse.frames.filter((f) => f.id !== undefined && f.data !== undefined).map((f) => f.data as string);
      expect(liveSse.filter((text) => (JSON.parse(text) as EventEnvelope).metadata.run_id === runId)).toEqual(live);

      const first = JSON.parse(live[0]) as EventEnvelope;
      expect(Object.keys(first.metadata)).toEqual([
        'run_id',
        'session_id',
        'timestamp_ms',
        ...labelKeys,
        'sequence',
        'session_sequence',
      ]);

      const page = await request(t.url).get(`/v1/sessions/${id}/runs/${runId}/events?after=-1&limit=1000`).expect(200);
      expect((page.body as { events: EventEnvelope[] }).events.map((e) => JSON.stringify(e))).toEqual(live);
      const paged: string[] = [];
      for (let after = -1; ;) {
        const res = await request(t.url)
          .get(`/v1/sessions/${id}/runs/${runId}/events?after=${after}&limit=5`)
          .expect(200);
        const body = res.body as { events: EventEnvelope[]; nextAfter: number | null };
        paged.push(...body.events.map((e) => JSON.stringify(e)));
        if (body.nextAfter === null) break;
        after = body.nextAfter;
      }
      expect(paged).toEqual(live);

      const all = ws.events.map((e) => JSON.stringify(e));
      const trace = await request(t.url).get(`/v1/sessions/${id}/trace`).expect(200);
      expect((trace.body as { events: EventEnvelope[] }).events.map((e) => JSON.stringify(e))).toEqual(all);
      const replay = await subscribe(t.url, id, { after: 0 });
      await replay.waitFor((e) => e.metadata.session_sequence === ws.cursor());
      expect(replay.events.map((e) => JSON.stringify(e))).toEqual(all);
      const sseReplay = await openSse(`${t.url}/v1/sessions/${id}/events`, { 'last-event-id': '0' });
      await sseReplay.waitFor((e) => e.metadata.session_sequence === ws.cursor());
      expect(sseReplay.frames.filter((f) => f.id !== undefined).map((f) => f.data)).toEqual(liveSse);
      for (const reader of [sse, sseReplay]) reader.abort();
      for (const socket of [ws, replay]) socket.close();
    });
  }
});

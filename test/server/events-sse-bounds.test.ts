import { get, type IncomingMessage } from 'node:http';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { parseSse, openSse } from '../support/sse-client.js';
import { useTestServers } from '../support/run-helpers.js';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('SSE: a reader too slow is bounded', () => {
  const start = useTestServers();

  it('a reader that stops reading is ended (`: close 4008`), and resumes from its last id with no gap and no duplicate', async () => {
    // A small window: once the kernel's socket buffers are full, 16 frames wait here, then the reader is ended.
    const t = await start({
      config: { limits: { subscriberBufferEvents: 16, maxTranscriptBytes: 256 * 1024 * 1024 } },
    });
    // Eight 2 MiB answers stay in the history: a context window that holds them, so every run streams its text.
    await request(t.url).post('/v1/sessions').send({ sessionId: 'slow', maxContextTokens: 50_000_000 }).expect(201);
    const url = new URL(`${t.url}/v1/sessions/slow/events`);
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      get(
        { host: url.hostname, port: url.port, path: url.pathname, headers: { accept: 'text/event-stream' } },
        resolve,
      ).on('error', reject);
    });
    expect(response.statusCode).toBe(200);
    // Stop reading: nothing is taken from the socket.
    response.pause();
    // 8 runs of 2 MiB each: far more than the kernel's socket buffers and the window hold.
    let lastRun = '';
    for (let run = 0; run < 8; run += 1) {
      t.fake.script({ text: 'z'.repeat(2 * 1024 * 1024), chunks: 64 });
      const answer = await request(t.url)
        .post('/v1/sessions/slow/runs')
        .send({ input: `run ${run}`, wait: true })
        .expect(200);
      // A failed run (e.g. CONTEXT_LIMIT_EXCEEDED) streams a few small events: the test would prove nothing.
      expect(answer.body.run.status).toBe('completed');
      lastRun = answer.body.runId as string;
    }
    // Read again: what reached the reader before the end is still there, then the end of the response.
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise((resolve) => response.once('end', resolve).once('error', resolve).once('close', resolve));
    response.resume();
    await ended;
    const { frames } = parseSse(Buffer.concat(chunks).toString('utf8'));
    const ids = frames.filter((f) => f.id !== undefined).map((f) => Number(f.id));
    expect(ids.length).toBeGreaterThan(0);
    expect(ids).toEqual(range(ids[0] ?? 0, ids.at(-1) ?? 0));
    const lastId = ids.at(-1) ?? 0;
    // The server wrote `: close 4008 ...` and ended the response. A reader that takes the rest within
    // SSE_END_GRACE_MS reads the comment last and a complete response; this one came back seconds later
    // (the runs take that long), so the server had cut it off: what the kernel held, then no end chunk.
    if (response.complete) expect(frames.at(-1)?.comment).toMatch(/^close 4008 slow consumer/);
    else expect(frames.some((f) => f.comment?.startsWith('close') === true)).toBe(false);
    const total = 8 * (64 + 12);
    expect(lastId).toBeLessThan(total);

    // Resume from the last id: the rest, once.
    const resumed = await openSse(`${t.url}/v1/sessions/slow/events`, { 'last-event-id': String(lastId) });
    const end = await resumed.waitFor((e) => e.type === 'agent_end' && e.metadata.run_id === lastRun, 30_000);
    const rest = resumed.events().map((e) => e.metadata.session_sequence);
    expect(rest).toEqual(range(lastId + 1, end.metadata.session_sequence));
    resumed.abort();
  }, 120_000);
});

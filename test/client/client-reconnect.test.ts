import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { A3sClient, type AgentEvent, type SocketEventStream } from '../../src/client/index.js';
import { useTestServers } from '../support/run-helpers.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

/** The run's events must be exactly the REST page's, in order: none twice, none skipped. */
async function expectExactlyOnce(
  events: AgentEvent[],
  rest: { metadata: { session_sequence: number } }[],
): Promise<void> {
  const got = events.map((e) => Number(e.metadata.session_sequence));
  expect(new Set(got).size).toBe(got.length);
  expect(got).toEqual(rest.map((e) => e.metadata.session_sequence));
  expect(events[0].type).toBe('agent_start');
  expect(events.at(-1)?.type).toBe('agent_end');
}

describe('event streams reconnect by themselves from the last session_sequence', () => {
  const start = useTestServers();

  it('a socket cut mid-run (TCP proxy) resumes: every event exactly once, in order', async () => {
    const t = await start();
    const proxy = await startTcpProxy(t.url.replace(/^http:/, 'redis:'));
    try {
      const viaProxy = new A3sClient({ baseUrl: proxy.url.replace(/^redis:/, 'http:'), WebSocket });
      const direct = new A3sClient({ baseUrl: t.url, WebSocket });
      const session = await viaProxy.session(t.root);
      t.fake.script({ text: 'abcdefghijklmnopqrst', chunks: 20, chunkDelayMs: 40 });
      const closes: number[] = [];
      const stream = (await session.stream('count', undefined, {
        reconnect: { initialDelayMs: 50 },
        onReconnect: (info) => closes.push(info.code),
      })) as SocketEventStream;
      const events: AgentEvent[] = [];
      for (let event = await stream.nextEvent(); event !== null; event = await stream.nextEvent()) {
        events.push(event);
        if (events.length === 4) {
          // Reset every open connection and refuse new ones for a while: the stream backs off and retries.
          proxy.cut('reset');
          setTimeout(() => proxy.restore(), 300);
        }
      }
      expect(stream.reconnectCount).toBeGreaterThanOrEqual(1);
      expect(closes[0]).toBe(1006);
      const rest = await (await direct.getSession(session.sessionId)).runEvents(String(stream.runId));
      await expectExactlyOnce(events, rest);
      expect(
        events
          .filter((e) => e.type === 'text_delta')
          .map((e) => e.text)
          .join(''),
      ).toBe('abcdefghijklmnopqrst');
    } finally {
      await proxy.close();
    }
  });

  it('a 4008 (slow consumer) close resumes the same way', async () => {
    const t = await start({ config: { limits: { subscriberBufferEvents: 4 } } });
    // The first socket stops reading right after its first frame (no pongs), so the server closes it with
    // 4008 once its window is full; it reads again later and sees the buffered frames and the close.
    let sockets = 0;
    class StallingWebSocket extends WebSocket {
      constructor(url: string) {
        super(url);
        if (sockets++ === 0) {
          this.once('message', () => {
            this.pause();
            setTimeout(() => this.resume(), 1500);
          });
        }
      }
    }
    const client = new A3sClient({ baseUrl: t.url, WebSocket: StallingWebSocket });
    const session = await client.session(t.root);
    t.fake.script({ text: 'abcdefghijklmnopqrstuvwxyz0123', chunks: 30, chunkDelayMs: 15 });
    const closes: number[] = [];
    const stream = (await session.stream('many events', undefined, {
      onReconnect: (info) => closes.push(info.code),
    })) as SocketEventStream;
    const events = await stream.collect();
    expect(closes).toContain(4008);
    expect(sockets).toBeGreaterThanOrEqual(2);
    await expectExactlyOnce(events, await session.runEvents(String(stream.runId)));
    expect(
      events
        .filter((e) => e.type === 'text_delta')
        .map((e) => e.text)
        .join(''),
    ).toBe('abcdefghijklmnopqrstuvwxyz0123');
  });

  it('a cursor older than retention gets a replay_gap event and the callback', async () => {
    const t = await start();
    const client = new A3sClient({ baseUrl: t.url, WebSocket });
    const session = await client.session(t.root, { retentionLimits: { maxEventsPerRun: 5 } });
    t.fake.script({ text: 'abcdefghij', chunks: 10 });
    await session.send('fill the log');
    const gaps: unknown[] = [];
    const stream = session.events({ after: 0, onReplayGap: (gap) => gaps.push(gap) });
    const first = await stream.nextEvent();
    if (first?.type !== 'replay_gap') throw new Error(`the first event is ${first?.type}, not replay_gap`);
    expect(first.payload).toMatchObject({ requested_after: 0 });
    expect(gaps).toEqual([first.payload]);
    const next = await stream.nextEvent();
    expect(next?.metadata.session_sequence).toBe(first.payload.first_available);
    stream.close();
    expect(await stream.nextEvent()).toBeNull();
  });
});

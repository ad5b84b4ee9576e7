import { describe, expect, it } from 'vitest';
import { EventSubscription, type SubscriptionTransport } from '../../src/runtime/events/event-subscription.js';
import { SessionEventLog } from '../../src/runtime/events/session-event-log.js';

interface Frame {
  type: string;
  payload: Record<string, unknown>;
  metadata: { session_sequence?: number };
}

/** A transport that records frames, ack requests and the close, and acknowledges only when told. */
class RecordingTransport implements SubscriptionTransport {
  readonly frames: Frame[] = [];
  readonly ackRequests: number[] = [];
  ackRequestCount = 0;
  closedWith: { code: number; reason: string } | undefined;
  queued = 0;

  send(frame: string): void {
    if (this.closedWith) throw new Error('send after close');
    this.frames.push(JSON.parse(frame) as Frame);
  }

  requestAck(token: number): void {
    this.ackRequests.push(token);
    this.ackRequestCount += 1;
  }

  close(code: number, reason: string): void {
    this.closedWith = { code, reason };
  }

  queuedBytes(): number {
    return this.queued;
  }

  sequences(): number[] {
    return this.frames.flatMap((f) => (f.metadata.session_sequence !== undefined ? [f.metadata.session_sequence] : []));
  }
}

const codes = { slowConsumer: 4008, sessionClosed: 4010 };
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

function append(log: SessionEventLog, n: number, runId: string | undefined = 'r1', type = 'text_delta'): void {
  for (let i = 0; i < n; i += 1)
    log.append({
      version: 1,
      type,
      payload: {},
      metadata: { ...(runId ? { run_id: runId } : {}), session_id: 's', timestamp_ms: 0 },
    });
}

function setup(
  window: number,
  bytes = 1 << 20,
  limits = { maxEventsPerRun: 10_000, maxRuns: 10, maxSessionEvents: 10_000 },
) {
  const log = new SessionEventLog(limits);
  const transport = new RecordingTransport();
  const subscription = new EventSubscription(
    log,
    transport,
    { maxUnackedFrames: window, maxUnackedBytes: bytes },
    codes,
  );
  /** Acknowledge every request so far, as a reading client's pongs would. */
  const ackAll = () => {
    for (const token of transport.ackRequests.splice(0)) subscription.ack(token);
  };
  return { log, transport, subscription, ackAll };
}

describe('EventSubscription', () => {
  it('replays a backlog larger than the window one window at a time, then follows live events', () => {
    const { log, transport, subscription, ackAll } = setup(8);
    append(log, 50);
    subscription.start(0);
    expect(transport.sequences()).toEqual(range(1, 8));
    expect(subscription.isLive).toBe(false);
    for (let rounds = 0; rounds < 100 && !subscription.isLive; rounds += 1) ackAll();
    expect(subscription.isLive).toBe(true);
    expect(transport.sequences()).toEqual(range(1, 50));
    // Events appended during catch-up are read from the log, never twice.
    append(log, 3);
    ackAll();
    append(log, 2);
    expect(transport.sequences()).toEqual(range(1, 55));
    expect(transport.closedWith).toBeUndefined();
  });

  it('reads events appended while it waits for acknowledgements during catch-up', () => {
    const { log, transport, subscription, ackAll } = setup(4);
    append(log, 6);
    subscription.start(2);
    expect(transport.sequences()).toEqual([3, 4, 5, 6]);
    append(log, 3); // not live yet: these come from the log in turn, not from the listener
    expect(transport.sequences()).toEqual([3, 4, 5, 6]);
    for (let rounds = 0; rounds < 20 && !subscription.isLive; rounds += 1) {
      ackAll();
      append(log, 1);
    }
    expect(subscription.isLive).toBe(true);
    const last = log.lastSequence;
    expect(transport.sequences()).toEqual(range(3, last));
    expect(transport.closedWith).toBeUndefined();
  });

  it('closes a catching-up subscriber that acknowledges nothing while a whole window of new events is appended', () => {
    const { log, transport, subscription } = setup(4);
    append(log, 10);
    subscription.start(0);
    expect(transport.sequences()).toEqual([1, 2, 3, 4]);
    append(log, 3);
    expect(transport.closedWith).toBeUndefined();
    append(log, 1);
    expect(transport.closedWith?.code).toBe(4008);
    expect(log.listenerCount).toBe(0);
  });

  it('closes a live subscriber whose unacknowledged frames reach the window, and writes nothing after', () => {
    const { log, transport, subscription } = setup(8);
    subscription.start(undefined);
    append(log, 8);
    expect(transport.sequences()).toEqual(range(1, 8));
    expect(transport.ackRequests.length).toBeGreaterThan(0);
    append(log, 1);
    expect(transport.closedWith?.code).toBe(4008);
    expect(transport.closedWith?.reason).toContain('limits.subscriberBufferEvents');
    expect(Buffer.byteLength(transport.closedWith?.reason ?? '')).toBeLessThanOrEqual(123);
    append(log, 5);
    expect(transport.frames).toHaveLength(8);
    expect(log.listenerCount).toBe(0);
  });

  it('keeps a live subscriber that acknowledges open indefinitely', () => {
    const { log, transport, subscription, ackAll } = setup(8);
    subscription.start(undefined);
    for (let i = 0; i < 200; i += 1) {
      append(log, 1);
      ackAll();
    }
    expect(transport.closedWith).toBeUndefined();
    expect(transport.sequences()).toEqual(range(1, 200));
    // Requests go out every quarter window (2 frames here), not per frame.
    expect(transport.ackRequestCount).toBe(100);
  });

  it('bounds unacknowledged bytes as well as frames', () => {
    const { log, transport, subscription } = setup(1000, 2000);
    subscription.start(undefined);
    for (let i = 0; i < 100 && !transport.closedWith; i += 1)
      log.append({
        version: 1,
        type: 'text_delta',
        payload: { text: 'x'.repeat(300) },
        metadata: { run_id: 'r1', session_id: 's', timestamp_ms: 0 },
      });
    expect(transport.closedWith?.code).toBe(4008);
    expect(transport.closedWith?.reason).toContain('bytes');
    expect(transport.frames.length).toBeLessThan(10);
  });

  it('closes a subscriber whose bytes pile up in process even though it acknowledges everything', () => {
    const { log, transport, subscription, ackAll } = setup(8, 4096);
    subscription.start(undefined);
    append(log, 3);
    ackAll();
    transport.queued = 5000; // acknowledged, yet not even handed to the OS: the acknowledgements are lies
    append(log, 1);
    expect(transport.closedWith?.code).toBe(4008);
    expect(transport.closedWith?.reason).toContain('5000 bytes');
  });

  it('ignores acknowledgements it never asked for', () => {
    const { log, transport, subscription } = setup(4);
    subscription.start(undefined);
    append(log, 4);
    subscription.ack(999);
    subscription.ack(-1);
    append(log, 1);
    expect(transport.closedWith?.code).toBe(4008);
  });

  it('announces every hole with a replay_gap frame before the first event after it', () => {
    const { log, transport, subscription, ackAll } = setup(100, 1 << 20, {
      maxEventsPerRun: 3,
      maxRuns: 10,
      maxSessionEvents: 10,
    });
    append(log, 5, 'r1'); // retains 3..5
    append(log, 5, 'r2'); // retains 8..10
    subscription.start(0);
    ackAll();
    expect(
      transport.frames.map((f) =>
        f.type === 'replay_gap'
          ? `gap ${String(f.payload.requested_after)}->${String(f.payload.first_available)}`
          : f.metadata.session_sequence,
      ),
    ).toEqual(['gap 0->3', 3, 4, 5, 'gap 5->8', 8, 9, 10]);
    expect(subscription.isLive).toBe(true);
  });

  it('announces a gap when everything after the cursor was dropped, then follows live events', () => {
    const { log, transport, subscription } = setup(100, 1 << 20, {
      maxEventsPerRun: 2,
      maxRuns: 10,
      maxSessionEvents: 10,
    });
    append(log, 4, 'r1');
    log.dropRun('r1');
    subscription.start(1);
    append(log, 1, 'r2');
    expect(transport.frames.map((f) => f.type)).toEqual(['replay_gap', 'text_delta']);
    expect(transport.frames[0].payload).toEqual({ requested_after: 1, first_available: 5 });
    expect(transport.sequences()).toEqual([5]);
  });

  it('treats a cursor beyond the log as caught up', () => {
    const { log, transport, subscription } = setup(10);
    append(log, 3);
    subscription.start(500);
    append(log, 1);
    expect(transport.sequences()).toEqual([4]);
    expect(transport.frames.map((f) => f.type)).toEqual(['text_delta']);
  });

  it('closes with the session-closed code after writing session_closed', () => {
    const { log, transport, subscription } = setup(10);
    subscription.start(undefined);
    append(log, 1, undefined, 'session_closed');
    expect(transport.frames.map((f) => f.type)).toEqual(['session_closed']);
    expect(transport.closedWith?.code).toBe(4010);
  });

  it('answers control messages within a doubled window, then closes a client that never reads', () => {
    const { transport, subscription } = setup(4);
    subscription.start(undefined);
    for (let i = 0; i < 20 && !transport.closedWith; i += 1) subscription.sendControl({ type: 'pong', payload: {} });
    expect(transport.frames).toHaveLength(8);
    expect(transport.closedWith?.code).toBe(4008);
  });

  it('writes nothing after stop', () => {
    const { log, transport, subscription } = setup(10);
    subscription.start(undefined);
    subscription.stop();
    append(log, 3);
    subscription.sendControl({ type: 'pong', payload: {} });
    expect(transport.frames).toEqual([]);
    expect(log.listenerCount).toBe(0);
  });
});

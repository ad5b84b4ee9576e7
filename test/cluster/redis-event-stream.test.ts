import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  RedisEventStream,
  streamReaderFor,
  type RedisEventStreamOptions,
} from '../../src/cluster/redis-event-stream.js';
import { SessionLeases } from '../../src/cluster/session-lease.js';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import type { RedisClient } from '../../src/stores/redis-client.js';
import { sessionKey, type SessionKey } from '../../src/stores/session-key.js';
import { deleteKeysWithPrefix, randomKeyPrefix } from '../stores/redis-test-client.js';
import { connectRedisTarget } from '../support/redis-target.js';
import { sleep, waitUntil } from './wait-until.js';

function event(sessionId: string, sessionSequence: number, type = 'text_delta'): EventEnvelope {
  return {
    version: 1,
    type,
    payload: { text: `event ${sessionSequence}` },
    metadata: {
      run_id: 'run-1',
      session_id: sessionId,
      sequence: sessionSequence - 1,
      session_sequence: sessionSequence,
      timestamp_ms: 1_700_000_000_000 + sessionSequence,
    },
  };
}

/** The key of session `id` of the tests' tenant. */
function k(id: string): SessionKey {
  return sessionKey('tenant-a', id);
}

function sequences(events: readonly EventEnvelope[]): number[] {
  return events.map((e) => e.metadata.session_sequence);
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, index) => from + index);
}

describe('RedisEventStream', () => {
  let writer: RedisClient;
  let keyPrefix: string;
  const clients: RedisClient[] = [];
  const streams: RedisEventStream[] = [];

  beforeEach(() => {
    writer = connectRedisTarget();
    keyPrefix = randomKeyPrefix();
  });

  afterEach(async () => {
    await Promise.all(streams.splice(0).map((stream) => stream.close()));
    await deleteKeysWithPrefix(writer, keyPrefix);
    await Promise.all([writer, ...clients.splice(0)].map((client) => client.quit()));
  });

  // A node's stream: its own blocking reader, made from the writer as the server makes it (on a cluster, with
  // sharded subscribers), and a writer (shared with the test unless given).
  function stream(options: Partial<RedisEventStreamOptions> = {}): RedisEventStream {
    const reader = streamReaderFor(options.writer ?? writer);
    reader.on('error', () => undefined);
    clients.push(reader);
    const created = new RedisEventStream({ redis: reader, writer, keyPrefix, ...options });
    streams.push(created);
    return created;
  }

  it('appends entries with id <session_sequence>-0 and reads after exact cursors', async () => {
    const events = stream();
    for (const n of range(1, 10)) await events.append(k('s1'), event('s1', n));
    const key = events.streamKey(k('s1'));
    expect(key).toBe(`${keyPrefix}{tenant-a/s1}:events`);
    const [first] = await writer.xrange(key, '-', '+', 'COUNT', 1);
    expect(first?.[0]).toBe('1-0');
    expect(first?.[1].slice(0, 2)).toEqual(['seq', '1']);

    expect(await events.readAfter(k('s1'), 0, 100)).toEqual(range(1, 10).map((n) => event('s1', n)));
    expect(sequences(await events.readAfter(k('s1'), 3, 4))).toEqual([4, 5, 6, 7]);
    expect(sequences(await events.readAfter(k('s1'), 9, 100))).toEqual([10]);
    expect(await events.readAfter(k('s1'), 10, 100)).toEqual([]);
    expect(await events.readAfter(k('nobody'), 0, 100)).toEqual([]);
    expect(await events.firstAvailable(k('s1'))).toBe(1);
    expect(await events.lastSequence(k('s1'))).toBe(10);
    expect(await events.firstAvailable(k('nobody'))).toBeUndefined();
  });

  it('refuses a sequence that is not above the last one, and an event of another session', async () => {
    const events = stream();
    await events.append(k('s1'), event('s1', 5));
    for (const stale of [5, 3]) {
      await expect(events.append(k('s1'), event('s1', stale))).rejects.toMatchObject({
        code: 'PERSISTENCE_FAILED',
        details: { sessionId: 's1', sequence: stale, reason: 'stale_sequence', lastSequence: 5 },
      });
    }
    await expect(events.append(k('s1'), event('s2', 6))).rejects.toMatchObject({ code: 'INTERNAL_ERROR' });
    expect(sequences(await events.readAfter(k('s1'), 0, 10))).toEqual([5]);
  });

  it('fences appends on the owner lease epoch', async () => {
    const events = stream();
    const a = new SessionLeases({ redis: writer, keyPrefix, nodeId: 'node-a', ttlMs: 10_000 });
    await a.acquire(k('s1'));
    await events.append(k('s1'), event('s1', 1), a.storeFence(k('s1')));
    await writer.incr(`${keyPrefix}{tenant-a/s1}:epoch`); // another node took over
    await expect(events.append(k('s1'), event('s1', 2), a.storeFence(k('s1')))).rejects.toMatchObject({
      code: 'PERSISTENCE_FAILED',
      details: { sessionId: 's1', sequence: 2, reason: 'fenced', epoch: 1, currentEpoch: '2' },
    });
    expect(await events.lastSequence(k('s1'))).toBe(1);
    await a.stop();
  });

  it('follows retained and live events in order, without duplicates, across appends made while following', async () => {
    const producer = stream();
    const consumer = stream();
    for (const n of range(1, 5)) await producer.append(k('s1'), event('s1', n));

    const seen: number[] = [];
    const controller = new AbortController();
    const following = consumer.follow(k('s1'), 2, (e) => seen.push(e.metadata.session_sequence), controller.signal);
    await waitUntil('the retained events arrived', () => seen.length === 3);
    // Appends while following: one at a time, in a concurrent burst, and after a pause (the reader blocks again).
    for (const n of range(6, 40)) await producer.append(k('s1'), event('s1', n));
    await Promise.all(range(41, 80).map((n) => producer.append(k('s1'), event('s1', n))));
    await sleep(50);
    await producer.append(k('s1'), event('s1', 81));
    await waitUntil('every event arrived', () => seen.length === 79);
    controller.abort();
    await following;
    expect(seen).toEqual(range(3, 81));

    await producer.append(k('s1'), event('s1', 82));
    await sleep(100);
    expect(seen).toHaveLength(79);
  });

  it('serves many followers over one blocking connection without waiting out each other’s blocks', async () => {
    const producer = stream();
    const consumer = stream({ blockMs: 5000 });
    const controller = new AbortController();
    const seen = new Map<string, number[]>();
    const follows: Array<Promise<void>> = [];
    for (const sessionId of ['s1', 's2', 's3']) {
      seen.set(sessionId, []);
      follows.push(
        consumer.follow(
          k(sessionId),
          0,
          (e) => seen.get(sessionId)?.push(e.metadata.session_sequence),
          controller.signal,
        ),
      );
      // Let the loop block before the next follower joins: the join must wake it (well under blockMs).
      await sleep(30);
    }
    // Two followers of one stream with different cursors each get exactly their part.
    const late: number[] = [];
    follows.push(consumer.follow(k('s1'), 2, (e) => late.push(e.metadata.session_sequence), controller.signal));
    const started = Date.now();
    for (const n of range(1, 4)) {
      for (const sessionId of ['s1', 's2', 's3']) await producer.append(k(sessionId), event(sessionId, n));
    }
    await waitUntil(
      'all followers caught up',
      () => [...seen.values()].every((got) => got.length === 4) && late.length === 2,
    );
    expect(Date.now() - started).toBeLessThan(4000);
    expect(Object.fromEntries(seen)).toEqual({ s1: [1, 2, 3, 4], s2: [1, 2, 3, 4], s3: [1, 2, 3, 4] });
    expect(late).toEqual([3, 4]);
    controller.abort();
    await Promise.all(follows);
  });

  it('rejects a follow whose callback throws, and ends follows on close', async () => {
    const events = stream();
    await events.append(k('s1'), event('s1', 1));
    const failing = events.follow(
      k('s1'),
      0,
      () => {
        throw new Error('subscriber exploded');
      },
      new AbortController().signal,
    );
    await expect(failing).rejects.toThrow('subscriber exploded');

    const seen: number[] = [];
    const open = events.follow(k('s1'), 0, (e) => seen.push(e.metadata.session_sequence), new AbortController().signal);
    await waitUntil('the follower got the event', () => seen.length === 1);
    await events.close();
    await open;
  });

  it('bounds each stream with MAXLEN ~ and reports the first available sequence after trimming', async () => {
    const events = stream({ maxLen: 50 });
    for (const n of range(1, 600)) await events.append(k('s1'), event('s1', n));
    const length = await writer.xlen(events.streamKey(k('s1')));
    // Approximate trimming removes whole internal nodes (100 entries by default): bounded, not exact.
    expect(length).toBeGreaterThanOrEqual(50);
    expect(length).toBeLessThan(300);
    const first = await events.firstAvailable(k('s1'));
    expect(first).toBe(600 - length + 1);
    expect(sequences(await events.readAfter(k('s1'), 0, 1))).toEqual([first]);

    // Exact trim: the replay_gap a subscriber at cursor 10 must be told about starts at 591.
    await events.trim(k('s1'), 10);
    expect(await events.firstAvailable(k('s1'))).toBe(591);
    expect(sequences(await events.readAfter(k('s1'), 10, 100))).toEqual(range(591, 600));

    // A follower behind the trimmed range gets what is retained; the jump 10 -> 591 is its gap.
    const seen: number[] = [];
    const controller = new AbortController();
    const following = events.follow(k('s1'), 10, (e) => seen.push(e.metadata.session_sequence), controller.signal);
    await waitUntil('retained events arrived', () => seen.length === 10);
    controller.abort();
    await following;
    expect(seen).toEqual(range(591, 600));

    await events.delete(k('s1'));
    expect(await events.firstAvailable(k('s1'))).toBeUndefined();
  });

  it('rejects followers of a stream holding an invalid entry, naming the entry', async () => {
    const events = stream();
    await writer.xadd(events.streamKey(k('s1')), '1-0', 'seq', '1', 'e', '{"version":2}');
    await expect(events.readAfter(k('s1'), 0, 10)).rejects.toMatchObject({
      code: 'PERSISTENCE_FAILED',
      message: expect.stringContaining(`stream ${events.streamKey(k('s1'))} entry 1-0 is not an EventEnvelopeV1`),
    });
    await expect(events.follow(k('s1'), 0, () => undefined, new AbortController().signal)).rejects.toMatchObject({
      code: 'PERSISTENCE_FAILED',
    });
  });
});

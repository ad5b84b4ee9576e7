import type { Cluster } from 'ioredis';
import type { EventEnvelope } from '../protocol/event-envelope.js';
import { deliverStreamEntries, type StreamFollow } from './stream-delivery.js';

/** Options for ShardedStreamFollower. */
export interface ShardedStreamFollowerOptions {
  /**
   * A Cluster client created with `shardedSubscribers: true` (one SSUBSCRIBE connection per master):
   * notifications arrive on it, and the follower's XREADs go through it.
   */
  reader: Cluster;
  /** The shard channel an append to stream `key` is announced on (same hash tag as the key). */
  channelOf: (key: string) => string;
  /** Every followed stream is read this often even without a notification (default 1000 ms). */
  pollMs?: number;
  /** Most entries read per stream and read (default 500). */
  count?: number;
  /** Told about a failed read or (un)subscription; the next notification or poll retries. */
  onError?: (error: unknown) => void;
}

interface FollowedStream {
  channel: string;
  follows: Set<StreamFollow>;
  /** The read in flight, if any; `again` asks it for one more round. */
  reading: Promise<void> | undefined;
  again: boolean;
  /** The SSUBSCRIBE in flight or done; undefined after a failed one, which the next poll retries. */
  subscription: Promise<void> | undefined;
}

type XReadReply = Array<[key: string, items: Array<[id: string, fields: string[]]>]> | null;

/**
 * Follows session streams on a Redis Cluster, where one XREAD BLOCK cannot span streams of different
 * slots: each followed stream's shard channel is SSUBSCRIBEd (appends SPUBLISH its new sequence from the
 * append script, in the stream's slot), a notification triggers a non-blocking XREAD of that stream from
 * its smallest cursor, and every followed stream is also read every `pollMs`, so a notification lost while
 * a subscriber reconnects (a failover) delays delivery by at most that much and never skips an event.
 */
export class ShardedStreamFollower {
  private readonly reader: Cluster;
  private readonly channelOf: (key: string) => string;
  private readonly pollMs: number;
  private readonly count: number;
  private readonly onError: (error: unknown) => void;
  private readonly streams = new Map<string, FollowedStream>();
  private readonly keyOfChannel = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(options: ShardedStreamFollowerOptions) {
    this.reader = options.reader;
    this.channelOf = options.channelOf;
    this.pollMs = options.pollMs ?? 1000;
    this.count = options.count ?? 500;
    this.onError = options.onError ?? (() => undefined);
    this.reader.on('smessage', (channel: string) => {
      const key = this.keyOfChannel.get(channel);
      if (key !== undefined) this.read(key);
    });
  }

  /**
   * Call onEvent, in order and once each, for every event appended to stream `key` with session_sequence
   * greater than `after`, until `signal` aborts (resolves) or onEvent throws or an entry is invalid (rejects).
   */
  follow(key: string, after: number, onEvent: (event: EventEnvelope) => void, signal: AbortSignal): Promise<void> {
    if (this.closed || signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      let stream = this.streams.get(key);
      const follow: StreamFollow = {
        key,
        after,
        onEvent,
        settle: (error?: unknown) => {
          const current = this.streams.get(key);
          if (current === undefined || !current.follows.delete(follow)) return;
          signal.removeEventListener('abort', onAbort);
          if (current.follows.size === 0) this.unfollow(key, current);
          if (error === undefined) resolve();
          else reject(error);
        },
      };
      const onAbort = (): void => follow.settle();
      signal.addEventListener('abort', onAbort, { once: true });
      if (stream === undefined) {
        stream = {
          channel: this.channelOf(key),
          follows: new Set(),
          reading: undefined,
          again: false,
          subscription: undefined,
        };
        this.streams.set(key, stream);
        this.keyOfChannel.set(stream.channel, key);
        this.subscribe(key, stream);
        this.ensureTimer();
      }
      stream.follows.add(follow);
      this.read(key);
    });
  }

  /** End every follow (their promises resolve) and wait for the reads in flight. */
  async close(): Promise<void> {
    this.closed = true;
    const reads = [...this.streams.values()].map((stream) => stream.reading);
    for (const stream of [...this.streams.values()]) for (const follow of [...stream.follows]) follow.settle();
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all(reads);
  }

  // Read again once subscribed: an append between the first read and the subscription is not missed.
  private subscribe(key: string, stream: FollowedStream): void {
    stream.subscription = this.reader.ssubscribe(stream.channel).then(
      () => this.read(key),
      (error: unknown) => {
        stream.subscription = undefined;
        this.onError(error);
      },
    );
  }

  private unfollow(key: string, stream: FollowedStream): void {
    this.streams.delete(key);
    this.keyOfChannel.delete(stream.channel);
    if (!this.closed) this.reader.sunsubscribe(stream.channel).catch((error: unknown) => this.onError(error));
    if (this.streams.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private ensureTimer(): void {
    if (this.timer !== undefined || this.closed) return;
    this.timer = setInterval(() => {
      for (const [key, stream] of this.streams) {
        if (stream.subscription === undefined) this.subscribe(key, stream);
        this.read(key);
      }
    }, this.pollMs);
    this.timer.unref();
  }

  /** Read `key` from its smallest cursor until caught up; a read asked for while one runs makes it go round again. */
  private read(key: string): void {
    const stream = this.streams.get(key);
    if (stream === undefined) return;
    stream.again = true;
    if (stream.reading !== undefined) return;
    stream.reading = (async () => {
      while (stream.again && this.streams.get(key) === stream) {
        stream.again = false;
        let cursor = Number.POSITIVE_INFINITY;
        for (const follow of stream.follows) cursor = Math.min(cursor, follow.after);
        if (cursor === Number.POSITIVE_INFINITY) return;
        const reply = (await this.reader.xread('COUNT', this.count, 'STREAMS', key, `${cursor}-0`)) as XReadReply;
        const entries = reply?.[0]?.[1] ?? [];
        deliverStreamEntries(key, entries, cursor, stream.follows, (follow) => stream.follows.has(follow));
        if (entries.length >= this.count) stream.again = true;
      }
    })()
      .catch((error: unknown) => this.onError(error))
      .finally(() => {
        stream.reading = undefined;
      });
  }
}

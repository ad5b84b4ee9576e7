import type { Redis } from 'ioredis';
import type { EventEnvelope } from '../protocol/event-envelope.js';
import { deliverStreamEntries, type StreamFollow } from './stream-delivery.js';

/** Options for StreamFollower. */
export interface StreamFollowerOptions {
  /**
   * A client used for nothing but this follower's XREAD BLOCK: a blocked XREAD occupies its connection,
   * so any other command sent on it waits until the block ends.
   */
  reader: Redis;
  /** A normal client, used to CLIENT UNBLOCK the reader when the set of followed streams changes. */
  waker: Redis;
  /** Longest XREAD block (default 1000 ms). */
  blockMs?: number;
  /** Most entries read per stream and round (default 500). */
  count?: number;
  /** Told about a failed XREAD (the loop backs off and retries) or an UNBLOCK that failed. */
  onError?: (error: unknown) => void;
}

/** How long one XREAD blocks by default (ms). */
export const DEFAULT_BLOCK_MS = 1000;

type Follower = StreamFollow;

type XReadReply = Array<[key: string, items: Array<[id: string, fields: string[]]>]> | null;

/**
 * Follows many session streams over ONE blocking connection: a single loop runs XREAD BLOCK over every
 * followed key (from the smallest cursor per key), delivers each entry in order to the followers whose
 * cursor it passes, and is woken with CLIENT UNBLOCK when a follower joins or leaves, so a new follower
 * never waits out another's block.
 */
export class StreamFollower {
  private readonly reader: Redis;
  private readonly waker: Redis;
  private readonly blockMs: number;
  private readonly count: number;
  private readonly onError: (error: unknown) => void;
  private readonly followers = new Set<Follower>();
  private loop: Promise<void> | undefined;
  /** The reader's client id while an XREAD may be blocked on it. */
  private blockedClientId: number | undefined;
  /** Set when followers changed since the running XREAD was built. */
  private dirty = false;
  private unblocking = false;
  private closed = false;

  constructor(options: StreamFollowerOptions) {
    this.reader = options.reader;
    this.waker = options.waker;
    this.blockMs = options.blockMs ?? DEFAULT_BLOCK_MS;
    this.count = options.count ?? 500;
    this.onError = options.onError ?? (() => undefined);
  }

  /**
   * Call onEvent, in order and once each, for every event appended to stream `key` with session_sequence
   * greater than `after`, until `signal` aborts (resolves) or onEvent throws or an entry is invalid (rejects).
   */
  follow(key: string, after: number, onEvent: (event: EventEnvelope) => void, signal: AbortSignal): Promise<void> {
    if (this.closed || signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const follower: Follower = {
        key,
        after,
        onEvent,
        settle: (error?: unknown) => {
          if (!this.followers.delete(follower)) return;
          signal.removeEventListener('abort', onAbort);
          this.changed();
          if (error === undefined) resolve();
          else reject(error);
        },
      };
      const onAbort = (): void => follower.settle();
      signal.addEventListener('abort', onAbort, { once: true });
      this.followers.add(follower);
      this.changed();
    });
  }

  /** End every follow (their promises resolve) and wait for the read loop to stop. */
  async close(): Promise<void> {
    this.closed = true;
    for (const follower of [...this.followers]) follower.settle();
    await this.loop;
  }

  private changed(): void {
    this.dirty = true;
    if (this.loop === undefined) {
      if (this.followers.size > 0 && !this.closed) this.loop = this.run();
      return;
    }
    void this.unblock();
  }

  private async run(): Promise<void> {
    let failures = 0;
    try {
      while (this.followers.size > 0 && !this.closed) {
        this.dirty = false;
        const cursors = new Map<string, number>();
        for (const { key, after } of this.followers) cursors.set(key, Math.min(after, cursors.get(key) ?? after));
        const keys = [...cursors.keys()];
        try {
          const clientId = this.reader.client('ID');
          const read = this.reader.xread(
            'COUNT',
            this.count,
            'BLOCK',
            this.blockMs,
            'STREAMS',
            ...keys,
            ...keys.map((key) => `${cursors.get(key)}-0`),
          );
          // Both are pipelined on the reader; a failed CLIENT ID must not leave the XREAD rejection unhandled.
          read.catch(() => undefined);
          this.blockedClientId = await clientId;
          if (this.dirty) void this.unblock();
          const reply = (await read) as XReadReply;
          this.blockedClientId = undefined;
          failures = 0;
          this.deliver(reply, cursors);
        } catch (error) {
          this.blockedClientId = undefined;
          if (this.closed) break;
          this.onError(error);
          failures += 1;
          await delay(Math.min(50 * 2 ** failures, this.blockMs));
        }
      }
    } finally {
      this.loop = undefined;
      // A follower that joined while the loop was deciding to stop still needs one.
      if (this.followers.size > 0 && !this.closed) this.loop = this.run();
    }
  }

  private deliver(reply: XReadReply, cursors: ReadonlyMap<string, number>): void {
    for (const [key, entries] of reply ?? []) {
      deliverStreamEntries(key, entries, cursors.get(key) ?? Number.POSITIVE_INFINITY, this.followers, (follower) =>
        this.followers.has(follower),
      );
    }
  }

  // CLIENT UNBLOCK answers 0 when the XREAD has not reached the server yet (it was pipelined just after
  // CLIENT ID): retry briefly until it lands or the loop has moved on by itself.
  private async unblock(): Promise<void> {
    if (this.unblocking) return;
    this.unblocking = true;
    try {
      while (this.dirty && this.blockedClientId !== undefined) {
        const clientId = this.blockedClientId;
        const unblocked = await this.waker.client('UNBLOCK', clientId);
        if (unblocked === 1 || this.blockedClientId !== clientId) break;
        await delay(10);
      }
    } catch (error) {
      this.onError(error);
    } finally {
      this.unblocking = false;
    }
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });
}

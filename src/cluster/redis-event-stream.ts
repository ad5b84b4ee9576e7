import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from '../stores/redis-client.js';
import { CodeError } from '../errors.js';
import type { EventEnvelope } from '../protocol/event-envelope.js';
import { redisFailure } from '../stores/redis-failure.js';
import { defineRedisScript, runRedisScript } from '../stores/redis-script.js';
import { redisSessionKey } from '../stores/redis-keys.js';
import { DEFAULT_REDIS_KEY_PREFIX, type SessionFence } from '../stores/redis-session-store.js';
import { sessionIdOf, type SessionKey } from '../stores/session-key.js';
import { decodeStreamEntry, sequenceOfStreamId } from './stream-entry.js';
import { ShardedStreamFollower } from './sharded-stream-follower.js';
import { StreamFollower } from './stream-follower.js';

/** Default approximate bound of a session's event stream (entries), the default maxEventsPerRun. */
export const DEFAULT_STREAM_MAX_LEN = 10_000;

/** Options for RedisEventStream. */
export interface RedisEventStreamOptions {
  /**
   * follow()'s client. One Redis: a client dedicated to XREAD BLOCK (a blocked read holds its connection,
   * so it must not be shared with the stores or any other command: use `writer.duplicate()`). A Cluster: a
   * Cluster client with `shardedSubscribers: true` (streamReaderFor gives either). The caller owns it.
   */
  redis: RedisClient;
  /** A normal client for appends, ranges and trims (may be shared with the stores). The caller owns it. */
  writer: RedisClient;
  /** Prefix of every key (default "a3s:"). */
  keyPrefix?: string;
  /** Approximate bound on each stream's length, applied on every append as MAXLEN ~ (default 10000). */
  maxLen?: number;
  /** Longest XREAD block of follow() (default 1000 ms). */
  blockMs?: number;
  /** Told about a failed follow read; the follow loop backs off and retries. */
  onError?: (error: unknown) => void;
}

// KEYS: stream, [fence key]. ARGV: max len, session sequence, envelope JSON, epoch (or ""), notification
// channel (or ""). Entry ids are `<session_sequence>-0`, so Redis itself refuses a sequence that is not above
// the stream's last one. On a cluster the sequence is SPUBLISHed on the stream's shard channel (same slot).
const APPEND_SCRIPT = defineRedisScript(`
if KEYS[2] then
  local current = redis.call('GET', KEYS[2])
  if current ~= ARGV[4] then return {'fenced', current or ''} end
end
local added = redis.pcall('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], ARGV[2] .. '-0', 'seq', ARGV[2], 'e', ARGV[3])
if type(added) == 'table' and added.err then
  local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
  if last[1] then return {'stale_sequence', last[1][1]} end
  return {'stale_sequence', ''}
end
if ARGV[5] ~= '' then redis.call('SPUBLISH', ARGV[5], ARGV[2]) end
return {'ok', added}
`);

/**
 * The cross-node event stream: one Redis Stream `<prefix>{<tenant>/<sid>}:events` per session (its lease
 * epoch, the fence, shares the hash tag) whose entry ids are
 * `<session_sequence>-0` (fields `seq` and `e` = the EventEnvelopeV1 JSON), bounded by MAXLEN ~ on
 * every append. Cursors are exact: readAfter/follow return events with session_sequence > after.
 * Ranges use the writer; follow() multiplexes every follower over the one blocking client.
 */
export class RedisEventStream {
  /** Prefix of every key this stream writes. */
  readonly keyPrefix: string;
  /** Approximate per-stream bound applied on append. */
  readonly maxLen: number;
  private readonly writer: RedisClient;
  private readonly follower: StreamFollower | ShardedStreamFollower;
  /** On a cluster, appends announce themselves on the stream's shard channel. */
  private readonly sharded: boolean;

  constructor(options: RedisEventStreamOptions) {
    this.writer = options.writer;
    this.keyPrefix = options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
    this.maxLen = options.maxLen ?? DEFAULT_STREAM_MAX_LEN;
    if (!Number.isInteger(this.maxLen) || this.maxLen < 1)
      throw new RangeError(`stream maxLen must be a positive integer, got ${this.maxLen}`);
    const onError = options.onError === undefined ? {} : { onError: options.onError };
    const { redis: reader, writer } = options;
    if (reader instanceof Cluster || writer instanceof Cluster) {
      if (!(reader instanceof Cluster && writer instanceof Cluster))
        throw new TypeError('RedisEventStream: the reader and the writer must both be Cluster clients, or neither');
      if (reader.options.shardedSubscribers !== true)
        throw new TypeError(
          'RedisEventStream: a Cluster reader needs shardedSubscribers: true (use streamReaderFor(writer))',
        );
      this.sharded = true;
      this.follower = new ShardedStreamFollower({
        reader,
        channelOf: streamChannel,
        ...(options.blockMs === undefined ? {} : { pollMs: options.blockMs }),
        ...onError,
      });
    } else {
      this.sharded = false;
      this.follower = new StreamFollower({
        reader,
        waker: writer,
        ...(options.blockMs === undefined ? {} : { blockMs: options.blockMs }),
        ...onError,
      });
    }
  }

  /** The stream key of a session. */
  streamKey(session: SessionKey): string {
    return redisSessionKey(this.keyPrefix, session, 'events');
  }

  /**
   * Append a stamped event as entry `<session_sequence>-0`; with a fence (the owner's lease) the append is
   * refused unless the fence key still holds its epoch. Throws PERSISTENCE_FAILED with details.reason
   * "fenced" or "stale_sequence" (the sequence is not above the stream's last entry).
   */
  async append(session: SessionKey, envelope: EventEnvelope, fence?: SessionFence): Promise<void> {
    const sessionId = sessionIdOf(session);
    const sequence = envelope.metadata.session_sequence;
    if (envelope.metadata.session_id !== sessionId) {
      throw new CodeError(
        'INTERNAL_ERROR',
        `event ${sequence} of session ${envelope.metadata.session_id} appended to the stream of session ${sessionId}`,
        {
          sessionId,
        },
      );
    }
    const key = this.streamKey(session);
    const keys = fence === undefined ? [key] : [key, fence.ownerKey];
    const args = [
      this.maxLen,
      sequence,
      JSON.stringify(envelope),
      fence === undefined ? '' : String(fence.epoch),
      this.sharded ? streamChannel(key) : '',
    ];
    let reply: unknown;
    try {
      reply = await runRedisScript(this.writer, APPEND_SCRIPT, keys, args);
    } catch (error) {
      throw redisFailure(
        `failed to append event ${sequence} to the stream of session ${sessionId}`,
        { sessionId, sequence },
        error,
      );
    }
    const [outcome, found] = Array.isArray(reply) ? reply.map(String) : [];
    if (outcome === 'ok') return;
    if (outcome === 'fenced') {
      const holds = found === '' ? 'no lease holds the session' : `the lease is now at epoch ${found}`;
      throw new CodeError(
        'PERSISTENCE_FAILED',
        `refused to append event ${sequence} to session ${sessionId}: this node's ownership epoch ${fence?.epoch} is no longer current, ${holds} (fenced)`,
        { sessionId, sequence, reason: 'fenced', epoch: fence?.epoch, currentEpoch: found === '' ? null : found },
      );
    }
    if (outcome === 'stale_sequence') {
      const last = found === undefined || found === '' ? null : sequenceOfStreamId(found);
      throw new CodeError(
        'PERSISTENCE_FAILED',
        `refused to append event ${sequence} to session ${sessionId}: the stream already reached session_sequence ${last ?? '(trimmed)'} (stale_sequence)`,
        { sessionId, sequence, reason: 'stale_sequence', lastSequence: last },
      );
    }
    throw new CodeError('PERSISTENCE_FAILED', 'the event stream append script answered unexpectedly', {
      sessionId,
      sequence,
    });
  }

  /** Up to `count` retained events with session_sequence > afterSessionSequence, in order. */
  async readAfter(session: SessionKey, afterSessionSequence: number, count: number): Promise<EventEnvelope[]> {
    const sessionId = sessionIdOf(session);
    const key = this.streamKey(session);
    let entries: Array<[string, string[]]>;
    try {
      // Every id is `<n>-0`, so `<after>-1` is the first id past the cursor (exclusive start without "(").
      entries = await this.writer.xrange(key, `${afterSessionSequence}-1`, '+', 'COUNT', count);
    } catch (error) {
      throw redisFailure(`failed to read the event stream of session ${sessionId}`, { sessionId }, error);
    }
    return entries.map(([id, fields]) => decodeStreamEntry(key, id, fields));
  }

  /**
   * Call onEvent, in order and exactly once each, for every event with session_sequence >
   * afterSessionSequence, retained or appended later (by any node), until `signal` aborts (resolves);
   * rejects when onEvent throws or an entry is invalid. Events trimmed before they were read are skipped:
   * a jump in session_sequence is a gap the caller reports (replay_gap).
   */
  follow(
    session: SessionKey,
    afterSessionSequence: number,
    onEvent: (event: EventEnvelope) => void,
    signal: AbortSignal,
  ): Promise<void> {
    return this.follower.follow(this.streamKey(session), afterSessionSequence, onEvent, signal);
  }

  /** session_sequence of the oldest retained event, or undefined when the stream is empty or absent. */
  async firstAvailable(session: SessionKey): Promise<number | undefined> {
    return this.edge(session, 'first');
  }

  /** session_sequence of the newest retained event (a new owner continues after it), or undefined when empty. */
  async lastSequence(session: SessionKey): Promise<number | undefined> {
    return this.edge(session, 'last');
  }

  /** Trim the session's stream to exactly the newest `maxLen` entries (default this.maxLen); returns how many were removed. */
  async trim(session: SessionKey, maxLen = this.maxLen): Promise<number> {
    const sessionId = sessionIdOf(session);
    try {
      return await this.writer.xtrim(this.streamKey(session), 'MAXLEN', maxLen);
    } catch (error) {
      throw redisFailure(`failed to trim the event stream of session ${sessionId}`, { sessionId }, error);
    }
  }

  /** Delete the session's stream (its followers keep waiting; a new append starts it again). */
  async delete(session: SessionKey): Promise<void> {
    const sessionId = sessionIdOf(session);
    try {
      await this.writer.del(this.streamKey(session));
    } catch (error) {
      throw redisFailure(`failed to delete the event stream of session ${sessionId}`, { sessionId }, error);
    }
  }

  /** End every follow (their promises resolve); both clients stay open (the caller owns them). */
  async close(): Promise<void> {
    await this.follower.close();
  }

  private async edge(session: SessionKey, which: 'first' | 'last'): Promise<number | undefined> {
    const sessionId = sessionIdOf(session);
    const key = this.streamKey(session);
    let entries: Array<[string, string[]]>;
    try {
      entries =
        which === 'first'
          ? await this.writer.xrange(key, '-', '+', 'COUNT', 1)
          : await this.writer.xrevrange(key, '+', '-', 'COUNT', 1);
    } catch (error) {
      throw redisFailure(`failed to read the event stream of session ${sessionId}`, { sessionId }, error);
    }
    const id = entries[0]?.[0];
    return id === undefined ? undefined : sequenceOfStreamId(id);
  }
}

/** The shard channel appends to stream `key` are announced on (its hash tag, so the stream's slot). */
export function streamChannel(key: string): string {
  return `${key}:appended`;
}

/**
 * A client for RedisEventStream's follow(): for one Redis a duplicate connection (for XREAD BLOCK), for a
 * Cluster a duplicate with sharded subscribers (SSUBSCRIBE per master). The caller owns and quits it.
 */
export function streamReaderFor(client: RedisClient, options: { commandTimeout?: number } = {}): RedisClient {
  if (client instanceof Cluster)
    return client.duplicate([], {
      shardedSubscribers: true,
      redisOptions: { ...client.options.redisOptions, ...options },
    });
  return (client as Redis).duplicate(options);
}

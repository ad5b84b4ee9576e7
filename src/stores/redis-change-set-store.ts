import { ChangeSetSchema, type ChangeSet } from '../protocol/change-set.js';
import type { ChangeSetStore } from '../runtime/ports/change-set-store.js';
import type { RedisClient } from './redis-client.js';
import { redisFailure } from './redis-failure.js';
import { redisChangeSetsKey } from './redis-keys.js';
import { defineRedisScript, runRedisScript } from './redis-script.js';
import type { SessionKey } from './session-key.js';

// KEYS: the change sets hash. The bytes of every change set of the session, without reading them.
const BYTES = defineRedisScript(`
local total = 0
for _, run in ipairs(redis.call('HKEYS', KEYS[1])) do total = total + redis.call('HSTRLEN', KEYS[1], run) end
return total
`);

/**
 * ChangeSetStore on Redis, under the session's hash tag (one Redis Cluster slot with its snapshot): a hash
 * `...:changes`, field = run id, value = the change set's JSON. Any node reads a change set another node captured.
 */
export class RedisChangeSetStore implements ChangeSetStore {
  readonly kind = 'redis';

  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {}

  async put(session: SessionKey, changeSet: ChangeSet): Promise<void> {
    try {
      await this.redis.hset(redisChangeSetsKey(this.keyPrefix, session), changeSet.run_id, JSON.stringify(changeSet));
    } catch (error) {
      throw redisFailure('failed to store a change set', { runId: changeSet.run_id }, error);
    }
  }

  async get(session: SessionKey, runId: string): Promise<ChangeSet | undefined> {
    let raw: string | null;
    try {
      raw = await this.redis.hget(redisChangeSetsKey(this.keyPrefix, session), runId);
    } catch (error) {
      throw redisFailure('failed to read a change set', { runId }, error);
    }
    if (raw === null) return undefined;
    try {
      const parsed = ChangeSetSchema.safeParse(JSON.parse(raw));
      return parsed.success && parsed.data.run_id === runId ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  async bytes(session: SessionKey): Promise<number> {
    try {
      return Number(await runRedisScript(this.redis, BYTES, [redisChangeSetsKey(this.keyPrefix, session)], []));
    } catch (error) {
      throw redisFailure('failed to measure change sets', {}, error);
    }
  }

  async deleteSession(session: SessionKey): Promise<void> {
    try {
      await this.redis.del(redisChangeSetsKey(this.keyPrefix, session));
    } catch (error) {
      throw redisFailure('failed to delete change sets', {}, error);
    }
  }

  /** Nothing to release: the client is the server's. */
  async close(): Promise<void> {}
}

import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A Lua script with its SHA1, run by EVALSHA and re-sent with EVAL when the server lacks it. */
export interface RedisScript {
  /** The Lua source. */
  readonly source: string;
  /** SHA1 of the source, as Redis names cached scripts. */
  readonly sha: string;
}

/** Build a RedisScript from Lua source. */
export function defineRedisScript(source: string): RedisScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/**
 * Run a script atomically on the server with EVALSHA, falling back to EVAL once when the script cache
 * is empty (a fresh or restarted Redis); the caller's client is not modified (no defineCommand).
 */
export async function runRedisScript(
  redis: Redis,
  script: RedisScript,
  keys: readonly string[],
  args: ReadonlyArray<string | Buffer | number>,
): Promise<unknown> {
  try {
    return await redis.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
    return await redis.eval(script.source, keys.length, ...keys, ...args);
  }
}

import { createHash } from 'node:crypto';
import type { RedisClient } from './redis-client.js';
import type { ReplicaAck } from './replica-acks.js';

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
  redis: RedisClient,
  script: RedisScript,
  keys: readonly string[],
  args: ReadonlyArray<string | Buffer | number>,
): Promise<unknown> {
  try {
    return await redis.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!isNoScript(error)) throw error;
    return await redis.eval(script.source, keys.length, ...keys, ...args);
  }
}

/** A script's reply and how many replicas acknowledged the write (WAIT), or undefined when none were asked for. */
export interface AckedScriptReply {
  reply: unknown;
  acknowledged: number | undefined;
}

/**
 * runRedisScript followed by `WAIT <replicas> <timeout>` in one pipeline: on a cluster the pipeline goes to
 * the master of the keys' slot, so WAIT counts the replicas of the master that took the write. Without an
 * `ack` (or with 0 replicas) it is runRedisScript.
 */
export async function runAckedRedisScript(
  redis: RedisClient,
  script: RedisScript,
  keys: readonly string[],
  args: ReadonlyArray<string | Buffer | number>,
  ack: ReplicaAck | undefined,
): Promise<AckedScriptReply> {
  if (ack === undefined || ack.replicas === 0)
    return { reply: await runRedisScript(redis, script, keys, args), acknowledged: undefined };
  const attempt = async (source: 'sha' | 'eval'): Promise<[unknown, unknown]> => {
    const pipeline = redis.pipeline();
    if (source === 'sha') pipeline.evalsha(script.sha, keys.length, ...keys, ...args);
    else pipeline.eval(script.source, keys.length, ...keys, ...args);
    pipeline.wait(ack.replicas, ack.timeoutMs);
    const results = (await pipeline.exec()) ?? [];
    const [scriptResult, waitResult] = results;
    if (scriptResult?.[0]) throw scriptResult[0];
    if (waitResult?.[0]) throw waitResult[0];
    return [scriptResult?.[1], waitResult?.[1]];
  };
  let outcome: [unknown, unknown];
  try {
    outcome = await attempt('sha');
  } catch (error) {
    if (!isNoScript(error)) throw error;
    outcome = await attempt('eval');
  }
  const [reply, acknowledged] = outcome;
  return { reply, acknowledged: typeof acknowledged === 'number' ? acknowledged : 0 };
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

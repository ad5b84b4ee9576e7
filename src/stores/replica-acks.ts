import { Cluster } from 'ioredis';
import { CodeError } from '../errors.js';
import type { RedisClient } from './redis-client.js';

/** How many replicas must acknowledge a fenced write, and how long WAIT may take. */
export interface ReplicaAck {
  replicas: number;
  timeoutMs: number;
}

/** Options for ReplicaAcks. */
export interface ReplicaAcksOptions {
  client: RedisClient;
  /** config redis.min_replicas_ack; undefined = 1 when every master has a replica, else 0 (detected once). */
  configured: number | undefined;
  /** config redis.replica_ack_timeout_ms. */
  timeoutMs: number;
}

/**
 * The replica acknowledgement fenced writes wait for (snapshot saves, checkpoints, lease takeovers):
 * the configured count, or, by default, 1 when the Redis (INFO replication) or every master of the
 * cluster (CLUSTER NODES) has a replica, else 0. Detected on the first write and kept; a failed
 * detection is retried by the next write.
 */
export class ReplicaAcks {
  private detected: Promise<number> | undefined;

  constructor(private readonly options: ReplicaAcksOptions) {}

  /** The acknowledgement the next fenced write must get (undefined: none). */
  async required(): Promise<ReplicaAck | undefined> {
    const replicas = this.options.configured ?? (await this.detect());
    return replicas === 0 ? undefined : { replicas, timeoutMs: this.options.timeoutMs };
  }

  private detect(): Promise<number> {
    this.detected ??= detectReplicas(this.options.client).catch((error: unknown) => {
      this.detected = undefined;
      throw error;
    });
    return this.detected;
  }
}

async function detectReplicas(client: RedisClient): Promise<number> {
  if (client instanceof Cluster) {
    // CLUSTER commands skip ioredis's offline queue: before the slot map is loaded they fail "Connection is closed".
    if (client.status !== 'ready') await readyOf(client);
    const text = String(await client.cluster('NODES'));
    const masters = new Map<string, number>();
    const replicasOf: string[] = [];
    for (const line of text.split('\n')) {
      const [id, , flags, master] = line.split(' ');
      if (id === undefined || flags === undefined || flags.includes('fail') || flags.includes('noaddr')) continue;
      if (flags.includes('master')) masters.set(id, masters.get(id) ?? 0);
      else if (flags.includes('slave') && master !== undefined) replicasOf.push(master);
    }
    for (const master of replicasOf) if (masters.has(master)) masters.set(master, (masters.get(master) ?? 0) + 1);
    return masters.size > 0 && [...masters.values()].every((count) => count > 0) ? 1 : 0;
  }
  const info = await client.info('replication');
  return Number(/^connected_slaves:(\d+)/m.exec(info)?.[1] ?? 0) > 0 ? 1 : 0;
}

function readyOf(client: Cluster): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      reject(new Error('the Redis Cluster did not become ready within 10 s'));
    }, 10_000);
    const onReady = (): void => {
      clearTimeout(timer);
      resolve();
    };
    client.once('ready', onReady);
  });
}

/**
 * Throw PERSISTENCE_FAILED (details.reason "replica_ack") when fewer replicas than required acknowledged a
 * write within the timeout: the write may be lost in a failover, so it does not count as done.
 */
export function assertReplicated(
  acknowledged: number | undefined,
  ack: ReplicaAck | undefined,
  what: string,
  details: Record<string, unknown>,
): void {
  if (ack === undefined || acknowledged === undefined || acknowledged >= ack.replicas) return;
  throw new CodeError(
    'PERSISTENCE_FAILED',
    `${what} was not acknowledged by ${ack.replicas} replica${ack.replicas === 1 ? '' : 's'} within ${ack.timeoutMs} ms (${acknowledged} did): it may not survive a failover, so it does not count (replica_ack)`,
    { ...details, reason: 'replica_ack', replicasRequired: ack.replicas, replicasAcknowledged: acknowledged },
  );
}

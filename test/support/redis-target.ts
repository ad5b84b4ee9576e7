// Which Redis the Redis-using tests run against: the run's single redis-server (default) or the run's local
// Redis Cluster (A3S_TEST_REDIS=cluster, set by the "redis-cluster" project in vitest.config.ts).
import { inject } from 'vitest';
import type { Cluster, Redis } from 'ioredis';
import { connectTestRedis } from '../stores/redis-test-client.js';
import type { FakeProvider } from './fake-provider.js';
import { connectTestCluster } from './redis-cluster.js';
import { startTestServer, TEST_CLUSTER_SECRET, type TestServer } from './test-server.js';

/** The Redis this test process targets: "cluster" when A3S_TEST_REDIS=cluster, else "single". */
export function redisTestMode(): 'single' | 'cluster' {
  return process.env.A3S_TEST_REDIS === 'cluster' ? 'cluster' : 'single';
}

/** The environment a server process needs for the target: REDIS_URL (single) or REDIS_CLUSTER_NODES (cluster seeds). */
export function redisServerEnv(): Record<string, string> {
  const cluster = { A3S_CLUSTER_SECRET: TEST_CLUSTER_SECRET, A3S_CLUSTER_PEER_URLS: 'http://127.0.0.1:*' };
  return redisTestMode() === 'cluster'
    ? { REDIS_CLUSTER_NODES: clusterSeeds(), ...cluster }
    : { REDIS_URL: inject('redisUrl'), ...cluster };
}

/** The config fields an in-process test server needs for the target: `redisUrl` (single) or `redis.cluster` seeds (cluster). */
export function redisServerConfig(): { redisUrl: string } | { redis: { cluster: string[] } } {
  return redisTestMode() === 'cluster'
    ? { redis: { cluster: clusterSeeds().split(',') } }
    : { redisUrl: inject('redisUrl') };
}

/** A fresh test client for the target (a Cluster client in cluster mode), quiet about connection errors; the caller quits it. */
export function connectRedisTarget(): Redis | Cluster {
  return redisTestMode() === 'cluster' ? connectTestCluster(clusterSeeds()) : connectTestRedis(inject('redisUrl'));
}

/**
 * Two in-process nodes, `node-a` and `node-b`, on the target Redis under a fresh key prefix (`<prefix>-<random>:`),
 * sharing one fake provider and `config`; the caller closes both.
 */
export async function startRedisNodes(
  fake: FakeProvider,
  prefix: string,
  config: Record<string, unknown> = {},
): Promise<[TestServer, TestServer]> {
  const shared = {
    ...redisServerConfig(),
    redisKeyPrefix: `${prefix}-${Math.random().toString(36).slice(2)}:`,
    ...config,
  };
  const a = await startTestServer({ fake, config: { ...shared, nodeId: 'node-a' } });
  const b = await startTestServer({ fake, config: { ...shared, nodeId: 'node-b' } });
  return [a, b];
}

function clusterSeeds(): string {
  const seeds = inject('redisClusterSeeds');
  if (seeds === '')
    throw new Error(
      'A3S_TEST_REDIS=cluster but this run started no Redis Cluster: run the "redis-cluster" project (npx vitest run --project redis-cluster)',
    );
  return seeds;
}

/** The session backends the security tests run on: the embedded default (file store, no Redis) and Redis. */
export const SESSION_BACKENDS = ['embedded', 'redis'] as const;

/** Server config for a backend of SESSION_BACKENDS (Redis: the run's target under a fresh key prefix). */
export function backendConfig(backend: (typeof SESSION_BACKENDS)[number], prefix: string): Record<string, unknown> {
  return backend === 'redis'
    ? { ...redisServerConfig(), redisKeyPrefix: `${prefix}-${Math.random().toString(36).slice(2)}:` }
    : {};
}

import { defineConfig } from 'vitest/config';

// Integration tests run real servers, so allow generous timeouts.
const shared = { testTimeout: 30_000, hookTimeout: 30_000, pool: 'forks' } as const;

/**
 * The files that use the run's Redis through test/support/redis-target.ts: the "redis-cluster" project reruns
 * them on the run's local Redis Cluster. Not listed, as inherently single-Redis: test/server/redis-restart-run and
 * test/stores/redis-restart (they restart a redis-server of their own), test/server/shutdown-robust and
 * test/server/contract-paths (they cut one redis-server off through a TCP proxy, which a cluster client bypasses).
 */
export const REDIS_TEST_FILES = [
  'test/cli/cli-no-forward.test.ts',
  'test/client/client-cluster.test.ts',
  'test/changes/changes-redis.test.ts',
  'test/cluster/changes-balancer.test.ts',
  'test/cluster/allow-always-takeover.test.ts',
  'test/cluster/ask-user-takeover.test.ts',
  'test/cluster/balancer.test.ts',
  'test/cluster/console-balancer.test.ts',
  'test/cluster/conversation-balancer.test.ts',
  'test/cluster/event-tickets-cluster.test.ts',
  'test/cluster/runs-list-lost.test.ts',
  'test/cluster/schedules-cluster.test.ts',
  'test/cluster/tenant-quotas-cluster.test.ts',
  'test/cluster/webhooks-cluster.test.ts',
  'test/cluster/forwarding.test.ts',
  'test/cluster/node-loss.test.ts',
  'test/cluster/node-identity.test.ts',
  'test/cluster/redis-event-stream.test.ts',
  'test/cluster/session-lease.test.ts',
  'test/cluster/shared-roots.test.ts',
  'test/server/cluster.test.ts',
  'test/server/memory-cluster.test.ts',
  'test/server/process.test.ts',
  'test/server/retention.test.ts',
  'test/server/session-opening.test.ts',
  'test/server/tenant-session-bytes-redis.test.ts',
  'test/server/tenant-session-ids.test.ts',
  'test/server/ws-follow-bounds.test.ts',
  'test/server/ws-follow-control.test.ts',
  'test/stores/checkpoint-stores.test.ts',
  'test/stores/redis-session-store.test.ts',
  'test/telemetry/traces-redis.test.ts',
  'test/stores/replica-acks.test.ts',
  'test/stores/session-stores.test.ts',
  'test/stores/webhook-stores.test.ts',
];

/** Test configuration: every test on the single Redis ("default"), and the Redis tests again on a Redis Cluster ("redis-cluster"). */
export const config = defineConfig({
  test: {
    // One throwaway redis-server for the whole run (tests read its URL with inject('redisUrl')), and one local
    // Redis Cluster when the "redis-cluster" project runs (inject('redisClusterSeeds')). Set here only, not in
    // the projects, so it runs once per run.
    globalSetup: ['test/support/global-setup.ts'],
    projects: [
      { test: { ...shared, name: 'default', include: ['test/**/*.test.ts'] } },
      { test: { ...shared, name: 'redis-cluster', include: REDIS_TEST_FILES, env: { A3S_TEST_REDIS: 'cluster' } } },
    ],
  },
});

// vitest loads the default export of its config file.
// eslint-disable-next-line no-restricted-syntax
export default config;

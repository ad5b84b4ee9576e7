import { describe, expect, it } from 'vitest';
import { ConfigError, type ConfigProblem } from '../../src/config/config-error.js';
import { loadConfig } from '../../src/config/load-config.js';

async function problemsOf(options: Parameters<typeof loadConfig>[0]): Promise<readonly ConfigProblem[]> {
  const error = await loadConfig(options).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).problems;
}

describe('redis {} config: Redis Cluster seeds and replica acknowledgement', () => {
  it('reads REDIS_CLUSTER_NODES as the cluster seeds (comma-separated, blanks dropped), defaults the acknowledgement to detection', async () => {
    const config = await loadConfig({
      env: { REDIS_CLUSTER_NODES: '127.0.0.1:7000, 127.0.0.1:7001,,[::1]:7002', A3S_CLUSTER_SECRET: 's'.repeat(32) },
      cwd: '/',
    });
    expect(config.redis).toEqual({
      cluster: ['127.0.0.1:7000', '127.0.0.1:7001', '[::1]:7002'],
      tls: false,
      replicaAckTimeoutMs: 1000,
    });
    expect(config.redisUrl).toBeUndefined();
  });

  it('reads the block from a config file in the seed HCL dialect with snake_case keys', async () => {
    const configText =
      'redis {\n  cluster = ["redis-a:6379", "redis-b:6379"]\n  username = "a3s"\n  password = env("REDIS_PASSWORD")\n  tls = true\n  min_replicas_ack = 2\n  replica_ack_timeout_ms = 250\n}\n';
    const config = await loadConfig({
      env: { REDIS_PASSWORD: 'pw-1', A3S_CLUSTER_SECRET: 's'.repeat(32) },
      cwd: '/',
      configText,
    });
    expect(config.redis).toEqual({
      cluster: ['redis-a:6379', 'redis-b:6379'],
      username: 'a3s',
      password: 'pw-1',
      tls: true,
      minReplicasAck: 2,
      replicaAckTimeoutMs: 250,
    });
  });

  it('refuses one Redis and a cluster at once, naming redis.cluster', async () => {
    const problems = await problemsOf({
      env: {
        REDIS_URL: 'redis://127.0.0.1:6379',
        REDIS_CLUSTER_NODES: '127.0.0.1:7000',
        A3S_CLUSTER_SECRET: 's'.repeat(32),
      },
      cwd: '/',
    });
    expect(problems).toEqual([
      expect.objectContaining({ path: 'redis.cluster', message: expect.stringContaining('not both') }),
    ]);
  });

  it('names a bad seed, a negative acknowledgement count and an unknown key', async () => {
    const configText = 'redis {\n  cluster = ["redis://a:1"]\n  min_replicas_ack = -1\n  replicas = 2\n}\n';
    const problems = await problemsOf({ env: {}, cwd: '/', configText });
    const paths = problems.map((problem) => problem.path);
    expect(paths).toEqual(expect.arrayContaining(['redis.cluster[0]', 'redis.minReplicasAck']));
    expect(problems.find((problem) => problem.path === 'redis.cluster[0]')?.message).toContain('host:port');
    expect(problems).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: 'redis.replicas', message: 'unknown key' })]),
    );
  });
});

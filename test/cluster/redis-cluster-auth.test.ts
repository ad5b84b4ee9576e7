import { spawnSync } from 'node:child_process';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisSessionKey } from '../../src/stores/redis-keys.js';
import { sessionKey } from '../../src/stores/session-key.js';
import { startRedisCluster, type RedisClusterHandle } from '../support/redis-cluster.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

// redis { password } reaches every node of a cluster that requires one; this file starts a cluster of its own
// (requirepass on every node), so it runs once, in the default project.
const installed =
  spawnSync('redis-server', ['--version']).status === 0 && spawnSync('redis-cli', ['--version']).status === 0;
const TITLE = 'a Redis Cluster that requires a password';

describe.skipIf(!installed)(
  installed ? TITLE : `${TITLE} (skipped: redis-server is not installed: apt-get install -y redis-server)`,
  () => {
    const password = 'cluster-secret-1';
    let cluster: RedisClusterHandle;
    const servers: TestServer[] = [];
    beforeAll(async () => {
      cluster = await startRedisCluster({ password });
    });
    afterAll(async () => {
      await Promise.all(servers.splice(0).map((server) => server.close()));
      await cluster?.stop();
    });

    it('with redis.password the server saves a session on the cluster; with a wrong one it refuses to start, naming the cluster and not the password', async () => {
      const keyPrefix = `auth-${Math.random().toString(36).slice(2)}:`;
      const good = await startTestServer({
        config: { redis: { cluster: cluster.nodes, password }, redisKeyPrefix: keyPrefix },
      });
      servers.push(good);
      await request(good.url).get('/readyz').expect(200);
      await request(good.url).post('/v1/sessions').send({ sessionId: 'auth-1', autoSave: true }).expect(201);
      const saved = await request(good.url).post('/v1/sessions/auth-1/save').expect(200);
      const redis = cluster.connect();
      try {
        const stored = await redis.hget(redisSessionKey(keyPrefix, sessionKey('default', 'auth-1'), 'snapshot'), 'gen');
        expect(Number(stored)).toBe(saved.body.generation);
      } finally {
        redis.disconnect();
      }

      const started = Date.now();
      const refused = await startTestServer({
        config: { redis: { cluster: cluster.nodes, password: 'not-the-password' }, redisKeyPrefix: keyPrefix },
      }).then(
        (server) => {
          servers.push(server);
          return undefined;
        },
        (error: unknown) => error,
      );
      expect(refused).toMatchObject({
        code: 'PERSISTENCE_FAILED',
        message: expect.stringContaining('was not ready within 10000 ms'),
      });
      expect((refused as Error).message).toContain(cluster.nodes[0]);
      expect((refused as Error).message).toMatch(/WRONGPASS|NOAUTH/);
      expect(JSON.stringify(refused)).not.toContain('not-the-password');
      expect(Date.now() - started).toBeLessThan(20_000);
    }, 60_000);
  },
);

import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisSessionKey } from '../../src/stores/redis-keys.js';
import { sessionKey } from '../../src/stores/session-key.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { listening, startMain, type MainProcess } from '../support/main-process.js';
import { startRedisCluster, type RedisClusterHandle } from '../support/redis-cluster.js';
import { tempDir, TEST_CLUSTER_SECRET } from '../support/test-server.js';
import { subscribe } from '../support/ws-client.js';

// A master failover under a run: this file starts a Redis Cluster of its own (it kills one of its masters), so it
// runs once, in the default project, whatever A3S_TEST_REDIS says.
const installed =
  spawnSync('redis-server', ['--version']).status === 0 && spawnSync('redis-cli', ['--version']).status === 0;
const TITLE = 'two server processes on a Redis Cluster whose master fails during a run';

async function retry<T>(attempt: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await attempt().catch(() => undefined);
    if ((value !== undefined && ok(value)) || Date.now() > deadline) {
      if (value === undefined) throw new Error('retry: every attempt failed');
      return value;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!installed)(
  installed ? TITLE : `${TITLE} (skipped: redis-server is not installed: apt-get install -y redis-server)`,
  () => {
    let cluster: RedisClusterHandle;
    let fake: FakeProvider;
    const procs: MainProcess[] = [];
    beforeAll(async () => {
      cluster = await startRedisCluster();
      fake = await startFakeProvider();
    });
    afterAll(async () => {
      for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
      await fake?.close();
      await cluster?.stop();
    });

    it(
      'the run completes or fails with a clear code; the snapshot loads whole; a follower sees each event once, in order',
      { timeout: 90_000 },
      async () => {
        const prefix = `a3s-failover-${Math.random().toString(36).slice(2)}:`;
        const configFile = join(tempDir('a3s-cfg-'), 'cluster.json');
        // A lease far longer than a failover (node timeout 1 s, promotion within a few seconds): the owner keeps the session.
        writeFileSync(
          configFile,
          JSON.stringify({
            cluster: { leaseTtlMs: 15_000, nodeTtlMs: 15_000 },
            defaultPermissionPolicy: { enabled: false },
          }),
        );
        const env = {
          OPENAI_API_KEY: 'sk-test',
          OPENAI_BASE_URL: fake.baseUrl,
          A3S_MODEL: 'openai/test-model',
          A3S_PORT: '0',
          A3S_WORKSPACE_ROOTS: tempDir('a3s-ws-'),
          REDIS_CLUSTER_NODES: cluster.seeds,
          A3S_CLUSTER_SECRET: TEST_CLUSTER_SECRET,
          A3S_REDIS_KEY_PREFIX: prefix,
          A3S_CONFIG: configFile,
        };
        const a = startMain({ ...env, A3S_DATA_DIR: tempDir('a3s-a-'), A3S_NODE_ID: 'node-a' });
        const b = startMain({ ...env, A3S_DATA_DIR: tempDir('a3s-b-'), A3S_NODE_ID: 'node-b' });
        procs.push(a, b);
        const [urlA, urlB] = await Promise.all([listening(a), listening(b)]);

        await request(urlA).post('/v1/sessions').send({ sessionId: 'f1', autoSave: true }).expect(201);
        const follower = await subscribe(urlB, 'f1', { after: 0 });
        const rounds = 6;
        fake.script(
          ...Array.from({ length: rounds }, (_, i) => ({
            toolCalls: [{ id: `t${i}`, name: 'bash', arguments: { command: `echo round-${i} >> rounds.txt` } }],
            delayMs: 400,
          })),
          { text: 'all rounds done' },
        );
        const started = await request(urlA)
          .post('/v1/sessions/f1/runs')
          .send({ input: 'write the rounds' })
          .expect(202);
        const runId = started.body.runId as string;
        await fake.waitForRequests(2, 20_000);
        // A save acknowledged now (by the master and, with min_replicas_ack, its replica) must survive the failover.
        const acknowledged = await request(urlA).post('/v1/sessions/f1/save').expect(200);
        const acknowledgedGeneration = acknowledged.body.generation as number;

        // Kill the master serving the session's slot while the run is between rounds; its replica takes over.
        const snapshotKey = redisSessionKey(prefix, sessionKey('default', 'f1'), 'snapshot');
        const master = await cluster.masterOf(snapshotKey);
        const replica = await cluster.replicaOf(master);
        expect(replica).toBeDefined();
        await cluster.kill(master);
        await cluster.waitHealthy(20_000);
        expect(await cluster.masterOf(snapshotKey)).toBe(replica);

        // The run ends either way: completed, or failed with a catalogued code (never stuck, never a bare 500).
        const ended = await retry(
          () => request(urlA).get(`/v1/sessions/f1/runs/${runId}`),
          (r) => r.status === 200 && ['completed', 'failed'].includes(r.body.run.status),
          45_000,
        );
        expect(ended.status, JSON.stringify(ended.body)).toBe(200);
        const run = ended.body.run as { status: string; error?: { code: string; message: string } };
        if (run.status === 'failed') {
          expect(run.error?.code).toMatch(/^[A-Z][A-Z_]+$/);
          expect(run.error?.message).toEqual(expect.any(String));
        } else {
          expect(run.status).toBe('completed');
        }

        // The session's snapshot loads on its owner, and the stored hash is one whole generation.
        const session = await request(urlA).get('/v1/sessions/f1');
        expect(session.status, JSON.stringify(session.body)).toBe(200);
        const history = await request(urlA).get('/v1/sessions/f1/history').expect(200);
        expect(history.body.messages[0]).toMatchObject({ content: 'write the rounds' });
        const redis = cluster.connect();
        try {
          const stored = await redis.hgetallBuffer(snapshotKey);
          const enc = stored.enc?.toString('utf8');
          expect(['json', 'gzip']).toContain(enc);
          const text =
            enc === 'gzip'
              ? gunzipSync(stored.data ?? Buffer.alloc(0)).toString('utf8')
              : (stored.data ?? Buffer.alloc(0)).toString('utf8');
          const snapshot = JSON.parse(text) as { generation: number; session: { id: string } };
          expect(snapshot.session.id).toBe('f1');
          expect(String(snapshot.generation)).toBe(stored.gen?.toString('utf8'));
          expect(snapshot.generation).toBeGreaterThanOrEqual(acknowledgedGeneration);
        } finally {
          redis.disconnect();
        }

        // The follower on B follows the stream to the run's end and sees each event once, in order. Events the failed
        // master had not replicated yet are gone; then the follower is told so with a replay_gap frame, never left guessing.
        await follower.waitFor((e) => e.type === 'agent_end' && e.metadata.run_id === runId, 20_000);
        const sequences = follower.sequences();
        for (let i = 1; i < sequences.length; i += 1) expect(sequences[i]).toBeGreaterThan(sequences[i - 1]!);
        expect(new Set(sequences).size).toBe(sequences.length);
        let seen = 0;
        for (const frame of follower.frames) {
          const sequence = frame.metadata.session_sequence;
          if (sequence === undefined) continue;
          if (sequence !== seen + 1)
            expect(
              follower.frames.slice(0, follower.frames.indexOf(frame)).some((f) => f.type === 'replay_gap'),
              `gap before ${sequence}`,
            ).toBe(true);
          seen = sequence;
        }
        follower.close();
      },
    );
  },
);

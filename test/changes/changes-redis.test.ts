import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { ChangeSet } from '../../src/protocol/change-set.js';
import { RedisChangeSetStore } from '../../src/stores/redis-change-set-store.js';
import { sessionKey } from '../../src/stores/session-key.js';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { startFakeProvider } from '../support/fake-provider.js';
import { connectRedisTarget, redisServerConfig } from '../support/redis-target.js';
import { createSession, runAndWait } from '../support/run-helpers.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { keysWithPrefix, randomKeyPrefix } from '../stores/redis-test-client.js';
import { bash, changesOf, ownForSandbox } from './changes-helpers.js';

function changeSet(runId: string, patch: string): ChangeSet {
  return {
    schema: 'a3s.code.agent-change-set.v1',
    run_id: runId,
    state: 'completed',
    format: 'git_unified_diff_v1',
    encoding: 'base64',
    base_tree: `git-tree:${'a'.repeat(40)}`,
    result_tree: `git-tree:${'b'.repeat(40)}`,
    patch_digest: `sha256:${'c'.repeat(64)}`,
    patch_bytes: patch.length,
    patch_base64: Buffer.from(patch).toString('base64'),
    truncated: false,
    files: [{ path: 'a.txt', status: 'added', additions: 1, deletions: 0, binary: false, bytes: 2 }],
    not_captured: [],
    observed_at_ms: 1,
  };
}

describe('change sets on Redis', () => {
  it('the store keeps change sets under the session hash tag, measures and deletes them', async () => {
    const redis = connectRedisTarget();
    const prefix = randomKeyPrefix();
    const store = new RedisChangeSetStore(redis, prefix);
    const mine = sessionKey('team', 's1');
    const theirs = sessionKey('other', 's1');
    try {
      const one = changeSet('run_1', 'patch one\n');
      await store.put(mine, one);
      await store.put(mine, changeSet('run_2', 'patch two, longer\n'));
      expect(await store.get(mine, 'run_1')).toEqual(one);
      expect(await store.get(theirs, 'run_1')).toBeUndefined();
      expect(await store.get(mine, 'run_3')).toBeUndefined();
      expect(await store.bytes(mine)).toBe(
        JSON.stringify(one).length + JSON.stringify(changeSet('run_2', 'patch two, longer\n')).length,
      );
      expect(await keysWithPrefix(redis, prefix)).toEqual([`${prefix}{team/s1}:changes`]);
      await store.deleteSession(mine);
      expect(await store.get(mine, 'run_1')).toBeUndefined();
      expect(await store.bytes(mine)).toBe(0);
      expect(await keysWithPrefix(redis, prefix)).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });

  it.skipIf(!bwrapWorks())(
    'another node reads the change set; the range needs the trees this node does not hold',
    async () => {
      const fake = await startFakeProvider();
      const prefix = randomKeyPrefix();
      const config = { ...redisServerConfig(), redisKeyPrefix: prefix };
      const root = tempDir('a3s-ws-');
      const ws = join(root, 'moved');
      mkdirSync(ws);
      let a: TestServer | undefined;
      let b: TestServer | undefined;
      try {
        a = await startTestServer({ fake, config, root });
        ownForSandbox(a, ws);
        const id = await createSession(a, { workspace: ws, autoSave: true });
        fake.script({ toolCalls: [bash('r1', 'echo r > r.txt')] }, { text: 'ok' });
        const run = await runAndWait(a, id, 'go');
        const before = await changesOf(a, id, run.runId);
        expect(before.files).toMatchObject([{ path: 'r.txt', status: 'added' }]);
        await a.close();
        a = undefined;
        b = await startTestServer({ fake, config, root });
        expect(await changesOf(b, id, run.runId)).toEqual(before);
        const range = await request(b.url)
          .get(`/v1/sessions/${id}/changes`)
          .query({ from: run.runId, to: run.runId })
          .expect(422);
        expect(range.body.error).toMatchObject({ code: 'NO_CHANGE_SET', details: { reason: 'tree_missing' } });
        // Without a shared changes_dir the trees stayed with node A: a revert changes nothing and says why, and a
        // fork's copy is refused (docs/changes.md "Across nodes").
        const revert = await request(b.url).post(`/v1/sessions/${id}/runs/${run.runId}/revert`).send({}).expect(422);
        expect(revert.body.error).toMatchObject({ code: 'NO_CHANGE_SET', details: { reason: 'tree_missing' } });
        expect(readFileSync(join(ws, 'r.txt'), 'utf8')).toBe('r\n');
        expect((await request(b.url).get(`/v1/sessions/${id}`).expect(200)).body.session.messageCount).toBeGreaterThan(
          0,
        );
        const copy = await request(b.url)
          .post(`/v1/sessions/${id}/fork`)
          .send({ workspace: 'copy', sessionId: 'copy-on-b' })
          .expect(409);
        expect(copy.body.error).toMatchObject({ code: 'FORK_TREE_UNAVAILABLE', details: { reason: 'tree_missing' } });
        await request(b.url).delete(`/v1/sessions/${id}`).query({ purge: true }).expect(200);
        const redis = connectRedisTarget();
        try {
          expect((await keysWithPrefix(redis, prefix)).filter((key) => key.endsWith(':changes'))).toEqual([]);
        } finally {
          redis.disconnect();
        }
      } finally {
        await a?.close();
        await b?.close();
        await fake.close();
      }
    },
  );
});

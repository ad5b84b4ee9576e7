import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionSnapshotV1 } from '../../src/protocol/session-snapshot.js';
import { MemorySessionStore } from '../../src/stores/memory-session-store.js';
import { echoServerConfig, livePidsWithArgument, waitFor } from '../mcp/mcp-test-helpers.js';
import { startFakeProvider } from '../support/fake-provider.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { redisServerConfig } from '../support/redis-target.js';

const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0).reverse()) await server.close();
});

// These tests count MCP server processes by argument: host-supplied stdio servers run unsandboxed here
// (in the sandbox bwrap's own command line carries the argument too; see test/server/sandbox-mcp.test.ts).
const UNSANDBOXED = { sandbox: { hostDirect: 'none' } };

describe('opening a session happens once per id', () => {
  it('concurrent requests for a stored session hydrate it once: one copy, one set of MCP processes', async () => {
    const dataDir = tempDir('a3s-data-');
    const marker = `hydrate-${Math.random().toString(36).slice(2)}`;
    const first = await startTestServer({ dataDir, config: UNSANDBOXED });
    await request(first.url)
      .post('/v1/sessions')
      .send({ sessionId: 'shared', autoSave: true, mcpServers: [echoServerConfig('echo', marker)] })
      .expect(201);
    await first.close();
    expect(await waitFor(async () => (await livePidsWithArgument(marker)).length === 0)).toBe(true);

    const second = await startTestServer({ dataDir, root: first.root, config: UNSANDBOXED });
    servers.push(second);
    const answers = await Promise.all(Array.from({ length: 6 }, () => request(second.url).get('/v1/sessions/shared')));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(second.server.ctx.agent.sessionCount).toBe(1);
    expect(await livePidsWithArgument(marker)).toHaveLength(1);
    await second.close();
    servers.splice(0);
    expect(await waitFor(async () => (await livePidsWithArgument(marker)).length === 0)).toBe(true);
  });

  it('a session whose opening fails stops its MCP servers and leaves the id free', async () => {
    class FailingSaves extends MemorySessionStore {
      override async save(): Promise<number> {
        throw new Error('disk full');
      }
    }
    const marker = `failing-${Math.random().toString(36).slice(2)}`;
    const t = await startTestServer({ store: new FailingSaves(), config: UNSANDBOXED });
    servers.push(t);
    const failed = await request(t.url)
      .post('/v1/sessions')
      .send({ sessionId: 'doomed', autoSave: true, mcpServers: [echoServerConfig('echo', marker)] });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(failed.body.error.message).not.toContain('    at ');
    expect(await waitFor(async () => (await livePidsWithArgument(marker)).length === 0)).toBe(true);
    expect(t.server.ctx.agent.sessionCount).toBe(0);
    // The id (and its lease) were released: the same id opens fine without autoSave.
    await request(t.url).post('/v1/sessions').send({ sessionId: 'doomed' }).expect(201);
  });

  it('in a cluster, a node that saw a session closed follows the store: after another node reopens it, it answers 421 (no-forward) or forwards', async () => {
    const fake = await startFakeProvider();
    try {
      const shared = { ...redisServerConfig(), redisKeyPrefix: `a3s-reopen-${Math.random().toString(36).slice(2)}:` };
      const a = await startTestServer({ fake, config: { ...shared, nodeId: 'node-a' } });
      servers.push(a);
      const b = await startTestServer({ fake, root: a.root, config: { ...shared, nodeId: 'node-b' } });
      servers.push(b);
      await request(a.url).post('/v1/sessions').send({ sessionId: 'again', autoSave: true }).expect(201);
      await request(a.url).delete('/v1/sessions/again').expect(200);
      await request(a.url).get('/v1/sessions/again').expect(410);
      await request(b.url).get('/v1/sessions/again').expect(410);
      const reopened = await request(b.url).post('/v1/sessions').send({ sessionId: 'again', resume: true });
      expect(reopened.status, JSON.stringify(reopened.body)).toBe(201);
      const moved = await request(a.url).get('/v1/sessions/again').set('a3s-route', 'no-forward').expect(421);
      expect(moved.body.error).toMatchObject({ code: 'SESSION_OWNED_ELSEWHERE', details: { ownerNodeId: 'node-b' } });
      // Without the header A forwards to B, which has it open.
      expect((await request(a.url).get('/v1/sessions/again').expect(200)).body.session).toMatchObject({ id: 'again' });
    } finally {
      for (const server of servers.splice(0).reverse()) await server.close();
      await fake.close();
    }
  });

  it('a session stored before the policy bound was recorded, with its own policy, is restored bounded', async () => {
    const dataDir = tempDir('a3s-data-');
    const config = { defaultPermissionPolicy: { allow: ['read'], defaultDecision: 'deny' } };
    const first = await startTestServer({ dataDir, config });
    await request(first.url)
      .post('/v1/sessions')
      .send({ sessionId: 'legacy', autoSave: true, permissionPolicy: { enabled: false } })
      .expect(201);
    await first.close();
    // Rewrite the stored snapshot as an earlier version wrote it: no policyBounded field.
    const file = join(dataDir, 'sessions', 'default', 'legacy.json');
    const stored = JSON.parse(readFileSync(file, 'utf8')) as {
      snapshot?: SessionSnapshotV1;
    } & Partial<SessionSnapshotV1>;
    const snapshot = (stored.snapshot ?? stored) as SessionSnapshotV1;
    delete snapshot.session.policyBounded;
    writeFileSync(file, JSON.stringify(stored));
    const second = await startTestServer({ dataDir, root: first.root, config });
    servers.push(second);
    const answer = await request(second.url)
      .post('/v1/sessions/legacy/tools/bash/governed')
      .send({ args: { command: 'echo hi' } })
      .expect(200);
    expect(answer.body.output).toContain('operator policy: defaultDecision');
  });
});

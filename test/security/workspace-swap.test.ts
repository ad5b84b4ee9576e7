import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { redisServerConfig } from '../support/redis-target.js';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { ofType, toolMessage, useTestServers } from '../support/run-helpers.js';
import { startFakeProvider, type FakeProvider, type RecordedRequest } from '../support/fake-provider.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';

// Class 1 of issue 27: a sibling session of the same tenant swaps the workspace of another for a symlink (to /,
// another tenant's directory, the data dir) or another directory. Nothing of S1 may then run or be read outside.
const HAVE_BWRAP = bwrapWorks();
const A = 'token-swap-tenant-a-0000001';
const B = 'token-swap-tenant-b-0000001';
const TOKENS = [
  { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
  { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
];
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const SECRET = 'OTHER-TENANT-SECRET-7c1f';

/** One model turn calling `name` with `args`, then a final answer. */
function toolTurn(t: TestServer, id: string, name: string, args: Record<string, unknown>): void {
  t.fake.script({ toolCalls: [{ id, name, arguments: JSON.stringify(args) }] }, { text: 'done' });
}

async function run(t: TestServer, token: string, session: string, input: string): Promise<string> {
  const res = await request(t.url)
    .post(`/v1/sessions/${session}/runs`)
    .set(auth(token))
    .send({ input, wait: true })
    .expect(200);
  return (res.body as { runId: string }).runId;
}

describe.skipIf(!HAVE_BWRAP)('a workspace swapped by a sibling session (bwrap, tokens, sessions-only tenants)', () => {
  const start = useTestServers();

  it('S1 runs nothing and reads nothing outside once S2 swaps its workspace for a link to /, to another tenant or to the data dir; it works again once the directory is back', async () => {
    const t = await start({ config: { apiTokens: TOKENS, defaultPermissionPolicy: { enabled: false } } });
    const tenantA = join(t.root, 'tenant-a');
    // Tenant B's own directory exists with a secret (created by its first session).
    await request(t.url).post('/v1/sessions').set(auth(B)).send({ sessionId: 'b1' }).expect(201);
    writeFileSync(join(t.root, 'tenant-b', 'secret.txt'), SECRET);
    await request(t.url).post('/v1/sessions').set(auth(A)).send({ sessionId: 's2' }).expect(201);
    mkdirSync(join(tenantA, 'proj'));
    writeFileSync(join(tenantA, 'proj', 'own.txt'), 'mine');
    await request(t.url).post('/v1/sessions').set(auth(A)).send({ sessionId: 's1', workspace: 'proj' }).expect(201);

    for (const target of ['/', join(t.root, 'tenant-b'), t.dataDir]) {
      // S2's model (workspace: the tenant's directory) swaps proj for a link.
      toolTurn(t, `swap-${target.length}`, 'bash', {
        command: `mv proj proj.old && ln -s ${target} proj && ls -la proj`,
      });
      await run(t, A, 's2', 'swap');
      expect(toolMessage(t, `swap-${target.length}`)).toContain('->');

      toolTurn(t, `cmd-${target.length}`, 'bash', { command: 'cat secret.txt; ls; echo planted > planted.txt' });
      const runId = await run(t, A, 's1', 'look around');
      const output = toolMessage(t, `cmd-${target.length}`);
      expect(output).toContain('no longer the directory the session was created with');
      expect(output).not.toContain(SECRET);
      expect(existsSync(join(target, 'planted.txt'))).toBe(false);
      // The run went on and completed; the session says why its calls fail; a warning event names the change.
      const events = (
        await request(t.url).get(`/v1/sessions/s1/runs/${runId}/events?after=-1&limit=1000`).set(auth(A)).expect(200)
      ).body.events as EventEnvelope[];
      expect(ofType(events, 'agent_end').length).toBe(1);
      expect(ofType(events, 'workspace_warning')[0]?.payload).toMatchObject({ kind: 'changed' });
      const info = (await request(t.url).get('/v1/sessions/s1').set(auth(A)).expect(200)).body.session;
      expect(info.workspaceChanged.reason).toMatch(/another directory|symbolic link/);

      // S2 puts it back: S1 works again, on its own directory.
      toolTurn(t, `back-${target.length}`, 'bash', { command: 'rm proj && mv proj.old proj' });
      await run(t, A, 's2', 'restore');
      toolTurn(t, `own-${target.length}`, 'bash', { command: 'cat own.txt' });
      await run(t, A, 's1', 'read own');
      expect(toolMessage(t, `own-${target.length}`)).toContain('mine');
      expect(
        (await request(t.url).get('/v1/sessions/s1').set(auth(A)).expect(200)).body.session.workspaceChanged,
      ).toBeUndefined();
    }
    // Another directory under the same name (same tenant, same path, other inode) is refused as well.
    renameSync(join(tenantA, 'proj'), join(tenantA, 'proj.real'));
    mkdirSync(join(tenantA, 'proj'));
    toolTurn(t, 'other-dir', 'bash', { command: 'ls' });
    await run(t, A, 's1', 'ls');
    expect(toolMessage(t, 'other-dir')).toContain('no longer the directory');
  });

  it('holds while `mv -T` swaps the workspace for a link to an outside directory in a loop, with many concurrent commands', async () => {
    const t = await start();
    const outside = tempDir('a3s-swap-outside-');
    writeFileSync(join(outside, 'marker.txt'), SECRET);
    const proj = join(t.root, 'proj');
    mkdirSync(proj);
    writeFileSync(join(proj, 'marker.txt'), 'inside');
    await request(t.url).post('/v1/sessions').send({ sessionId: 'race', workspace: proj }).expect(201);
    symlinkSync(outside, join(t.root, 'evil'));
    // Swap proj <-> a link to the outside directory as fast as mv can, for the whole test.
    const swapper = spawn(
      'sh',
      ['-c', `cd ${t.root}; while :; do mv -T proj real; mv -T evil proj; mv -T proj evil; mv -T real proj; done`],
      { stdio: 'ignore' },
    );
    const outputs: string[] = [];
    try {
      const until = Date.now() + 3000;
      let i = 0;
      while (Date.now() < until) {
        const batch = Array.from({ length: 8 }, () => {
          i += 1;
          return request(t.url)
            .post('/v1/sessions/race/tools/bash')
            .send({ args: { command: `cat marker.txt; echo x > w${i}.txt` } });
        });
        for (const res of await Promise.all(batch)) outputs.push(String(res.body.output));
      }
    } finally {
      swapper.kill('SIGKILL');
    }
    expect(outputs.length).toBeGreaterThan(16);
    for (const output of outputs) expect(output).not.toContain(SECRET);
    expect(readdirSync(outside)).toEqual(['marker.txt']);
    // Some commands ran on the pinned directory (others were refused while the name pointed elsewhere).
    expect(outputs.some((output) => output.includes('inside'))).toBe(true);
    rmSync(outside, { recursive: true, force: true });
  });
});

describe.skipIf(!HAVE_BWRAP)("delegated children use the parent's pin", () => {
  const start = useTestServers();
  const runPrompt = (r: RecordedRequest) =>
    String(
      (r.body.messages as { role: string; content?: unknown }[]).findLast((m) => m.role === 'user')?.content ?? '',
    );
  const lastRole = (r: RecordedRequest) => (r.body.messages as { role: string }[]).at(-1)?.role;

  it('a task child of a session whose workspace was swapped for a link to an outside directory runs nothing there', async () => {
    const t = await start();
    const outside = tempDir('a3s-swap-child-');
    writeFileSync(join(outside, 'marker.txt'), SECRET);
    const proj = join(t.root, 'proj');
    mkdirSync(proj);
    await request(t.url).post('/v1/sessions').send({ sessionId: 'parent', workspace: proj }).expect(201);
    renameSync(proj, `${proj}.old`);
    symlinkSync(outside, proj);
    t.fake.script(
      {
        when: (r) => runPrompt(r) === 'delegate' && lastRole(r) === 'user',
        toolCalls: [
          {
            id: 'p_task',
            name: 'task',
            arguments: { agent: 'general', description: 'look', prompt: 'child: cat marker' },
          },
        ],
      },
      {
        when: (r) => runPrompt(r).startsWith('child:') && lastRole(r) === 'user',
        toolCalls: [{ id: 'c_bash', name: 'bash', arguments: { command: 'cat marker.txt; touch child-was-here' } }],
      },
      { when: (r) => runPrompt(r).startsWith('child:') && lastRole(r) === 'tool', text: 'child done' },
      { when: (r) => runPrompt(r) === 'delegate' && lastRole(r) === 'tool', text: 'parent done' },
    );
    const res = await request(t.url)
      .post('/v1/sessions/parent/runs')
      .send({ input: 'delegate', wait: true })
      .expect(200);
    expect(res.body.run.status).toBe('completed');
    expect(toolMessage(t, 'c_bash')).toContain('no longer the directory');
    expect(toolMessage(t, 'c_bash')).not.toContain(SECRET);
    expect(readdirSync(outside)).toEqual(['marker.txt']);
  });
});

describe('descriptors are held only while used', () => {
  const start = useTestServers();

  it('300 sessions that each ran a tool call hold no workspace descriptor once idle', async () => {
    const t = await start();
    const fds = () => readdirSync('/proc/self/fd').length;
    const before = fds();
    for (let i = 0; i < 300; i += 30) {
      await Promise.all(
        Array.from({ length: 30 }, async (_, j) => {
          const id = `idle-${i + j}`;
          await request(t.url).post('/v1/sessions').send({ sessionId: id }).expect(201);
          await request(t.url).post(`/v1/sessions/${id}/tools/ls`).send({ args: {} }).expect(200);
        }),
      );
    }
    // Sockets of supertest come and go; 300 held descriptors would not.
    expect(fds() - before).toBeLessThan(60);
  });
});

describe('restored sessions are pinned again', () => {
  const start = useTestServers();

  it('a directory recreated under the same name is pinned again with a workspace_warning event; a path that now leads elsewhere answers WORKSPACE_CHANGED', async () => {
    const root = tempDir('a3s-pin-restore-');
    const dataDir = tempDir('a3s-pin-data-');
    mkdirSync(join(root, 'recreated'));
    mkdirSync(join(root, 'linked'));
    const first = await start({ root, dataDir });
    await request(first.url)
      .post('/v1/sessions')
      .send({ sessionId: 'recreated', workspace: join(root, 'recreated'), autoSave: true })
      .expect(201);
    await request(first.url)
      .post('/v1/sessions')
      .send({ sessionId: 'linked', workspace: join(root, 'linked'), autoSave: true })
      .expect(201);
    await first.close();
    const stored = JSON.parse(readFileSync(join(dataDir, 'sessions', 'default', 'recreated.json'), 'utf8')) as {
      session: { workspacePin: { dev: string; ino: string } };
    };
    expect(stored.session.workspacePin.ino).toMatch(/^\d+$/);

    // Made while the old one still exists, so it cannot get the old inode number back.
    mkdirSync(join(root, 'recreated.new'));
    rmSync(join(root, 'recreated'), { recursive: true });
    renameSync(join(root, 'recreated.new'), join(root, 'recreated'));
    renameSync(join(root, 'linked'), join(root, 'linked.old'));
    symlinkSync(join(root, 'recreated'), join(root, 'linked'));

    const second = await start({ root, dataDir });
    const info = (await request(second.url).get('/v1/sessions/recreated').expect(200)).body.session;
    expect(info.initWarning).toContain('pinned again');
    const events = (await request(second.url).get('/v1/sessions/recreated/trace').expect(200)).body.events as {
      type: string;
      payload: { kind: string };
    }[];
    expect(events.filter((event) => event.type === 'workspace_warning').map((event) => event.payload.kind)).toEqual([
      'repinned',
    ]);
    await request(second.url).post('/v1/sessions/recreated/tools/ls').send({ args: {} }).expect(200);
    const refused = await request(second.url).get('/v1/sessions/linked');
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'WORKSPACE_CHANGED', details: { field: 'workspace' } });
  });
});

describe.skipIf(!HAVE_BWRAP)(
  'on Redis: a session taken over by another node is pinned there, and a swap is refused there too',
  () => {
    let fake: FakeProvider;
    const servers: TestServer[] = [];
    beforeAll(async () => {
      fake = await startFakeProvider();
    });
    afterAll(async () => {
      for (const server of servers) await server.close().catch(() => undefined);
      await fake.close();
    });

    it('node B restores the session node A created on the shared workspace root, runs its commands there, and refuses them once the name is a link', async () => {
      // Both nodes mount the workspace root at the same path (shared storage), on one Redis.
      const root = tempDir('a3s-swap-shared-');
      const shared = { ...redisServerConfig(), redisKeyPrefix: `ws-swap-${Math.random().toString(36).slice(2)}:` };
      const a = await startTestServer({ fake, root, config: { ...shared, nodeId: 'node-a' } });
      servers.push(a);
      const b = await startTestServer({ fake, root, config: { ...shared, nodeId: 'node-b' } });
      servers.push(b);
      const proj = join(root, 'proj');
      mkdirSync(proj);
      writeFileSync(join(proj, 'f.txt'), 'on shared storage');
      await request(a.url)
        .post('/v1/sessions')
        .send({ sessionId: 'redis-pin', workspace: proj, autoSave: true })
        .expect(201);
      const first = await request(a.url)
        .post('/v1/sessions/redis-pin/tools/bash')
        .send({ args: { command: 'cat f.txt' } })
        .expect(200);
      expect(first.body.output).toContain('on shared storage');
      // Node A goes away; node B takes the session over from Redis.
      await a.close();
      const onB = await request(b.url)
        .post('/v1/sessions/redis-pin/tools/bash')
        .send({ args: { command: 'cat f.txt' } })
        .expect(200);
      expect(onB.body.output).toContain('on shared storage');
      renameSync(proj, `${proj}.old`);
      symlinkSync('/', proj);
      const refused = await request(b.url)
        .post('/v1/sessions/redis-pin/tools/bash')
        .send({ args: { command: 'ls etc' } })
        .expect(200);
      expect(refused.body.output).toContain('no longer the directory');
      expect(refused.body.metadata).toMatchObject({ code: 'WORKSPACE_CHANGED' });
    });
  },
);

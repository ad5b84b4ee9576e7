import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { toolMessage } from '../support/run-helpers.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';

// Red team (2026-12-02), over HTTP against a real server: two sessions-only tenants, bash/read/write allowed,
// the sandbox required. The model is hostile; the server runs in this process, so /proc/self/fd is the server's.
const HAVE_BWRAP = bwrapWorks();
const A = 'token-red-tenant-a-00000001';
const B = 'token-red-tenant-b-00000001';
// Tenant B's host (host_direct: POST .../tools/:name) drives B's tools fast where the call's origin does not matter.
const H = 'token-red-tenant-b-host-001';
const TOKENS = [
  { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
  { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
  { token: H, principal: 'bob-host', tenantId: 'tenant-b', scopes: ['sessions', 'host_direct'] },
];
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const A_SECRET = 'TENANT-A-SECRET-5d0e1b';
const DATA_SECRET = 'DATA-DIR-SECRET-91aa7c';
const openFds = (): number => readdirSync('/proc/self/fd').length;

interface ToolBody {
  output: string;
  exitCode: number;
}

async function toolTurn(
  t: TestServer,
  token: string,
  session: string,
  id: string,
  name: string,
  args: Record<string, unknown>,
): Promise<string> {
  t.fake.script({ toolCalls: [{ id, name, arguments: JSON.stringify(args) }] }, { text: 'done' });
  await request(t.url)
    .post(`/v1/sessions/${session}/runs`)
    .set(auth(token))
    .send({ input: id, wait: true })
    .expect(200);
  return toolMessage(t, id);
}

describe.skipIf(!HAVE_BWRAP)('red team over HTTP: two tenants, the same session id and workspace names', () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer({
      config: { apiTokens: TOKENS, sandbox: { mode: 'required' }, defaultPermissionPolicy: { enabled: false } },
    });
    for (const token of [A, B])
      await request(t.url).post('/v1/sessions').set(auth(token)).send({ sessionId: 'home' }).expect(201);
    for (const tenant of ['tenant-a', 'tenant-b']) mkdirSync(join(t.root, tenant, 'proj'));
    writeFileSync(join(t.root, 'tenant-a', 'proj', 'secret.txt'), A_SECRET);
    for (const token of [A, B])
      await request(t.url)
        .post('/v1/sessions')
        .set(auth(token))
        .send({ sessionId: 'ci', workspace: 'proj' })
        .expect(201);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("B's `ci` in B's `proj` never sees A's: files, bash in the workspace, the session record", async () => {
    const read = await toolTurn(t, B, 'ci', 'b-read', 'read', { file_path: 'secret.txt' });
    const climb = await toolTurn(t, B, 'ci', 'b-climb', 'read', { file_path: '../../tenant-a/proj/secret.txt' });
    const abs = await toolTurn(t, B, 'ci', 'b-abs', 'read', {
      file_path: join(t.root, 'tenant-a', 'proj', 'secret.txt'),
    });
    const bash = await toolTurn(t, B, 'ci', 'b-bash', 'bash', {
      command: 'cat secret.txt; ls -la .. /; cat ../*/proj/secret.txt; cat /proc/1/environ 2>&1 | head -c 300',
    });
    for (const output of [read, climb, abs, bash]) expect(output).not.toContain(A_SECRET);
    const info = await request(t.url).get('/v1/sessions/ci').set(auth(B)).expect(200);
    expect(info.body.session.workspace).toBe(join(t.root, 'tenant-b', 'proj'));
    expect(JSON.stringify(info.body)).not.toContain('tenant-a');
  });

  // Was a hole (class 4 of issue 27): the sandbox HOME was <state>/homes/<session id>, shared by A's and B's `ci`.
  // Homes are keyed by tenant and session now.
  it("B's `ci` does not get the sandbox HOME of A's `ci`", async () => {
    await toolTurn(t, A, 'ci', 'a-home', 'bash', {
      command: `echo ${A_SECRET} > ~/left.txt; cp secret.txt ~/copy.txt; ls -a ~`,
    });
    const home = await toolTurn(t, B, 'ci', 'b-home', 'bash', { command: 'cat ~/left.txt ~/copy.txt; ls -la ~' });
    expect(home).not.toContain(A_SECRET);
  });

  it("B cannot name A: tenantId/principal in the body, on resume, in the query; A's workspace by path", async () => {
    for (const body of [
      { tenantId: 'tenant-a' },
      { principal: 'alice' },
      { sessionId: 'ci', resume: true, tenantId: 'tenant-a' },
      { sessionId: 'ci', resume: true, principal: 'alice' },
    ]) {
      const res = await request(t.url).post('/v1/sessions').set(auth(B)).send(body);
      expect(res.status, JSON.stringify(body)).toBe(403);
    }
    for (const workspace of [
      '../tenant-a/proj',
      join(t.root, 'tenant-a', 'proj'),
      `${join(t.root, 'tenant-b')}/../tenant-a/proj`,
    ]) {
      const res = await request(t.url).post('/v1/sessions').set(auth(B)).send({ workspace });
      expect(res.status, workspace).toBeGreaterThanOrEqual(400);
      expect(res.text).not.toContain(A_SECRET);
    }
    expect((await request(t.url).get('/v1/sessions/ci?tenantId=tenant-a').set(auth(B))).status).toBe(403);
    expect((await request(t.url).get('/v1/sessions?tenantId=tenant-a').set(auth(B))).status).toBe(403);
    // A resume of `ci` by B resumes B's own (the key is per tenant), never A's.
    const resumed = await request(t.url)
      .post('/v1/sessions')
      .set(auth(B))
      .send({ sessionId: 'ci', resume: true })
      .expect(201);
    expect(resumed.body.session.workspace).toBe(join(t.root, 'tenant-b', 'proj'));
  });

  it('the options byte bound counts UTF-8 bytes and JSON escapes, not characters, across fields and nesting', async () => {
    // 3-byte characters: every string field under its character limit, the whole over 256 KiB in bytes.
    const euro = (n: number): string => '€'.repeat(n);
    const wide = { role: euro(20_000), guidelines: euro(50_000), responseStyle: euro(20_000), extra: euro(50_000) };
    const res = await request(t.url).post('/v1/sessions').set(auth(B)).send(wide);
    expect(res.status).toBe(413);
    // Control characters are 6 bytes each in compact JSON.
    const escaped = { guidelines: '\u0001'.repeat(50_000), extra: '\u0001'.repeat(50_000) };
    expect((await request(t.url).post('/v1/sessions').set(auth(B)).send(escaped)).status).toBe(413);
    // Astral characters (2 UTF-16 units, 4 bytes).
    const astral = {
      guidelines: '😀'.repeat(25_000),
      extra: '😀'.repeat(25_000),
      role: '😀'.repeat(10_000),
      responseStyle: '😀'.repeat(10_000),
    };
    expect((await request(t.url).post('/v1/sessions').set(auth(B)).send(astral)).status).toBe(413);
  });

  it("descriptors: 100 concurrent tool calls on 20 sessions while their workspaces are swapped for links out leave the server's count where it was", async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `fd-${i}`);
    for (const id of ids) {
      mkdirSync(join(t.root, 'tenant-b', id));
      writeFileSync(join(t.root, 'tenant-b', id, 'f.txt'), 'mine\n');
      await request(t.url).post('/v1/sessions').set(auth(B)).send({ sessionId: id, workspace: id }).expect(201);
    }
    // Warm up (lazily opened descriptors of the server: logs, stores, the sandbox's state).
    await Promise.all(
      ids.map((id) =>
        request(t.url)
          .post(`/v1/sessions/${id}/tools/read`)
          .set(auth(H))
          .send({ args: { file_path: 'f.txt' } }),
      ),
    );
    const before = openFds();
    const script = `
      const fs = require('node:fs'); const [base, out, ms] = process.argv.slice(1); const end = Date.now() + Number(ms);
      const ids = ${JSON.stringify(ids)}; let n = 0;
      while (Date.now() < end) { for (const id of ids) { const p = base + '/' + id;
        try { fs.renameSync(p, p + '.old'); fs.symlinkSync(out, p); fs.unlinkSync(p); fs.renameSync(p + '.old', p); n++; } catch {} } }
      console.log(n);`;
    const child = spawn(
      process.execPath,
      ['-e', script, join(t.root, 'tenant-b'), join(t.root, 'tenant-a', 'proj'), '2500'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const done = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    const bodies: string[] = [];
    const end = Date.now() + 2500;
    let statuses: number[] = [];
    while (Date.now() < end) {
      const wave = await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          const id = ids[i % ids.length] as string;
          const name = ['read', 'write', 'edit', 'patch'][i % 4] as string;
          const args = [
            { file_path: 'secret.txt' },
            { file_path: `w/${i}.txt`, content: 'x' },
            { file_path: 'secret.txt', old_string: 'T', new_string: 't' },
            { file_path: 'f.txt', diff: '@@ -1 +1 @@\n-mine\n+mine\n' },
          ][i % 4];
          const res = await request(t.url).post(`/v1/sessions/${id}/tools/${name}`).set(auth(H)).send({ args });
          bodies.push(res.text);
          return res.status;
        }),
      );
      statuses = statuses.concat(wave);
    }
    await done;
    expect(bodies.length).toBeGreaterThanOrEqual(100);
    for (const body of bodies) expect(body).not.toContain(A_SECRET);
    expect(readFileSync(join(t.root, 'tenant-a', 'proj', 'secret.txt'), 'utf8')).toBe(A_SECRET);
    expect(existsSync(join(t.root, 'tenant-a', 'proj', 'w'))).toBe(false);
    // Give closes queued on the event loop a moment.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(openFds()).toBeLessThanOrEqual(before + 2);
    expect(statuses.every((status) => status === 200)).toBe(true);
    // Some calls ran on the real workspace (the swap leaves it in place most of the time).
    expect(bodies.filter((body) => body.includes('"exitCode":0')).length).toBeGreaterThan(0);
  });
});

describe.skipIf(!HAVE_BWRAP)(
  'red team over HTTP: the data dir inside the workspace (one tenant, the default layout)',
  () => {
    let t: TestServer;
    let root = '';

    beforeAll(async () => {
      root = tempDir('a3s-red-root-');
      const dataDir = join(root, '.a3s');
      mkdirSync(dataDir);
      writeFileSync(join(dataDir, 'secret.json'), DATA_SECRET);
      t = await startTestServer({
        root,
        dataDir,
        config: { sandbox: { mode: 'required' }, defaultPermissionPolicy: { enabled: false } },
      });
      await request(t.url).post('/v1/sessions').send({ sessionId: 's', workspace: root }).expect(201);
    });
    afterAll(async () => {
      await t?.close();
    });

    const tool = async (name: string, args: Record<string, unknown>): Promise<ToolBody> => {
      const res = await request(t.url).post(`/v1/sessions/s/tools/${name}`).send({ args }).expect(200);
      return res.body as ToolBody;
    };

    it('the file tools never reach .a3s: other spellings, links, a symlinked parent', async () => {
      await tool('bash', {
        command: 'ln -s .a3s l1; ln -s ./.a3s/../.a3s l2; mkdir -p d; ln -s ../.a3s d/l3; ln -s "$PWD/.a3s" l4',
      });
      for (const file_path of [
        '.a3s/secret.json',
        './.a3s/secret.json',
        'x/../.a3s/secret.json',
        `${root}/.a3s/secret.json`,
        `${root}//.a3s//secret.json`,
        'l1/secret.json',
        'l2/secret.json',
        'd/l3/secret.json',
        'l4/secret.json',
      ]) {
        const body = await tool('read', { file_path });
        expect(body.output, file_path).not.toContain(DATA_SECRET);
        const written = await tool('write', {
          file_path: file_path.replace('secret.json', 'planted.json'),
          content: 'x',
        });
        expect(written.exitCode, file_path).not.toBe(0);
      }
      expect(existsSync(join(root, '.a3s', 'planted.json'))).toBe(false);
    });

    // Was a hole (fixed): a workspace inside the data dir (.a3s/checkpoints, .a3s/sandbox) hid nothing, since only
    // server dirs inside the workspace are hidden: every session's checkpoints and sandbox homes were readable.
    it('a session cannot take the data dir, or a directory inside it, as its workspace', async () => {
      mkdirSync(join(root, '.a3s', 'checkpoints'), { recursive: true });
      writeFileSync(join(root, '.a3s', 'checkpoints', 'other.json'), DATA_SECRET);
      for (const workspace of [
        '.a3s',
        join(root, '.a3s'),
        join(root, '.a3s', 'sessions'),
        './x/../.a3s',
        '.a3s/checkpoints',
        `${root}//.a3s/./checkpoints`,
      ]) {
        const res = await request(t.url).post('/v1/sessions').send({ workspace });
        expect(res.status, workspace).toBe(404);
        expect(res.body.error.code).toBe('WORKSPACE_NOT_FOUND');
      }
      // A link to it is resolved before it is pinned: refused the same.
      symlinkSync(join(root, '.a3s', 'checkpoints'), join(root, 'cp-link'));
      expect((await request(t.url).post('/v1/sessions').send({ workspace: 'cp-link' })).status).toBe(404);
    });

    // Was a hole (docs/red-team-2026-12-02.md): the sandbox bound the workspace without covering the hidden data
    // directory, so bash read .a3s and hard linked its files into the workspace for read to follow. It is covered
    // by an empty tmpfs now.
    it('bash in the sandbox cannot read .a3s, nor hard link a file of it for read to follow', async () => {
      const direct = await tool('bash', { command: 'cat .a3s/secret.json; ls -la .a3s' });
      const linked = await tool('bash', { command: 'ln .a3s/secret.json stolen.json 2>&1; echo rc=$?' });
      const read = await tool('read', { file_path: 'stolen.json' });
      expect(direct.output + linked.output + read.output).not.toContain(DATA_SECRET);
    });

    // Was a hole (same cause, fixed the same way): the workspace's files, the server's (root's) included, are the sandbox user's inside
    // the user namespace, so bash writes into .a3s: session snapshots the server restores, the passwd/group files
    // every sandbox gets ro-bound as /etc/passwd and /etc/group, other sessions' homes.
    it('bash in the sandbox cannot write into .a3s (session records, the sandbox passwd)', async () => {
      await tool('bash', {
        command:
          'mkdir -p .a3s/sessions; echo planted > .a3s/sessions/planted.json; echo "evil:x:0:0::/:/bin/sh" >> .a3s/sandbox/etc/passwd',
      });
      expect(existsSync(join(root, '.a3s', 'sessions', 'planted.json'))).toBe(false);
      expect(readFileSync(join(root, '.a3s', 'sandbox', 'etc', 'passwd'), 'utf8')).not.toContain('evil:');
    });
  },
);

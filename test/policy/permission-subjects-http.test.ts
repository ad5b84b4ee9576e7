import { mkdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';

const FILES_SERVER = fileURLToPath(new URL('../fixtures/mcp-files-server.mjs', import.meta.url));

describe('permission rules match the paths tools declare, normalized, over HTTP', () => {
  let t: TestServer;
  let id: string;
  let ws: string;
  const call = async (name: string, args: Record<string, unknown>) =>
    (await request(t.url).post(`/v1/sessions/${id}/tools/${name}/governed`).send({ args }).expect(200)).body as {
      output: string;
      exitCode: number;
    };

  beforeAll(async () => {
    t = await startTestServer({
      // The stdio MCP fixture lives outside the workspace: host-added stdio servers run unsandboxed here.
      config: { sandbox: { hostDirect: 'none' } },
      files: { 'src/secret/key.txt': 'TOP-SECRET\n', 'src/a.ts': 'export const a = 1;\n', 'docs/x.md': 'doc\n' },
    });
    ws = t.root;
    symlinkSync('src/secret', join(ws, 'innocent'));
    mkdirSync(join(ws, 'lib'));
    symlinkSync('../src/secret/key.txt', join(ws, 'lib', 'key.txt'));
    const created = await request(t.url)
      .post('/v1/sessions')
      .send({
        workspace: ws,
        permissionPolicy: {
          deny: [
            'read(src/secret/**)',
            'write(src/secret/**)',
            'patch(src/secret/**)',
            'grep(src/secret/**)',
            'mcp__files(src/secret/**)',
          ],
          allow: ['read', 'write(**)', 'patch(src/**)', 'grep', 'mcp__files(src/**)', 'mcp__files(docs/**)'],
          defaultDecision: 'deny',
        },
        mcpServers: [{ name: 'files', transport: { type: 'stdio', command: process.execPath, args: [FILES_SERVER] } }],
      })
      .expect(201);
    id = created.body.session.id as string;
  });
  afterAll(async () => {
    await t.close();
  });

  it('read: every spelling of a denied path is denied, the file is never shown', async () => {
    for (const file_path of [
      'src/secret/key.txt',
      './src/secret/key.txt',
      'src/../src/secret/key.txt',
      'src//secret/./key.txt',
      `${ws}/src/secret/key.txt`,
      'innocent/key.txt',
      'lib/key.txt',
    ]) {
      const result = await call('read', { file_path });
      expect(result.exitCode, file_path).toBe(1);
      expect(result.output, file_path).toContain('read(src/secret/**)');
      expect(result.output).not.toContain('TOP-SECRET');
    }
    expect((await call('read', { file_path: './src/a.ts' })).output).toContain('export const a');
  });

  it('write and patch: path rules now match patch, and a symlink cannot carry a write into the secret', async () => {
    const wrote = await call('write', { file_path: 'innocent/planted.txt', content: 'x' });
    expect(wrote.exitCode).toBe(1);
    expect(wrote.output).toContain('write(src/secret/**)');
    const patched = await call('patch', {
      file_path: 'src/a.ts',
      diff: '@@ -1 +1 @@\n-export const a = 1;\n+export const a = 2;\n',
    });
    expect(patched.exitCode).toBe(0);
    expect(readFileSync(join(ws, 'src/a.ts'), 'utf8')).toBe('export const a = 2;\n');
    writeFileSync(join(ws, 'docs/x.md'), 'doc\n');
    const outside = await call('patch', { file_path: 'docs/x.md', diff: '@@ -1 +1 @@\n-doc\n+changed\n' });
    expect(outside.exitCode).toBe(1);
    expect(outside.output).toContain('defaultDecision');
    expect(readFileSync(join(ws, 'docs/x.md'), 'utf8')).toBe('doc\n');
    const secret = await call('patch', { file_path: 'innocent/key.txt', diff: '@@ -1 +1 @@\n-TOP-SECRET\n+gone\n' });
    expect(secret.output).toContain('patch(src/secret/**)');
    expect(readFileSync(join(ws, 'src/secret/key.txt'), 'utf8')).toBe('TOP-SECRET\n');
  });

  it('grep: a search based above a denied tree is denied; one beside it runs', async () => {
    for (const path of [undefined, '.', 'src', 'innocent', './src/secret']) {
      const result = await call('grep', { pattern: 'SECRET', ...(path ? { path } : {}) });
      expect(result.exitCode, String(path)).toBe(1);
      expect(result.output).toContain('grep(src/secret/**)');
      expect(result.output).not.toContain('TOP-SECRET');
    }
    expect((await call('grep', { pattern: 'doc', path: 'docs' })).exitCode).toBe(0);
  });

  it('MCP: path arguments from the input schema, every path of a call must be allowed', async () => {
    expect((await call('mcp__files__read_many', { paths: ['src/a.ts', 'docs/x.md'] })).output).toBe(
      'read src/a.ts,docs/x.md',
    );
    const mixed = await call('mcp__files__read_many', { paths: ['src/a.ts', 'src/../src/secret/key.txt'] });
    expect(mixed.exitCode).toBe(1);
    expect(mixed.output).toContain('mcp__files(src/secret/**)');
    const unlisted = await call('mcp__files__read_many', { paths: ['src/a.ts', 'README.md'] });
    expect(unlisted.exitCode).toBe(1);
    expect(unlisted.output).toContain('defaultDecision');
    expect((await call('mcp__files__stat', { file_path: `${ws}/docs/x.md` })).output).toBe(`stat ${ws}/docs/x.md`);
    expect((await call('mcp__files__stat', { file_path: 'innocent/key.txt' })).exitCode).toBe(1);
  });
});

describe('a symlink swapped while a confirmation waits does not carry the call elsewhere', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      files: { 'src/secret/x.md': 'TOP-SECRET\n', 'docs/x.md': 'public\n' },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('read of link/x.md is asked while link -> docs; approved after link -> src/secret, it is refused', async () => {
    symlinkSync('docs', join(t.root, 'link'));
    const created = await request(t.url)
      .post('/v1/sessions')
      .send({
        workspace: t.root,
        permissionPolicy: { deny: ['read(src/secret/**)'], defaultDecision: 'ask' },
        confirmationPolicy: { enabled: true, defaultTimeoutMs: 20_000 },
      })
      .expect(201);
    const id = created.body.session.id as string;
    const pendingCall = request(t.url)
      .post(`/v1/sessions/${id}/tools/read/governed`)
      .send({ args: { file_path: 'link/x.md' } })
      .then((res) => res.body as { output: string; exitCode: number });
    let pending: { toolId: string }[] = [];
    for (let i = 0; i < 200 && pending.length === 0; i++) {
      pending = (await request(t.url).get(`/v1/sessions/${id}/confirmations`).expect(200)).body.confirmations;
      if (pending.length === 0) await new Promise((r) => setTimeout(r, 20));
    }
    expect(pending).toHaveLength(1);
    // The attacker's swap: the name now leads into the denied directory.
    unlinkSync(join(t.root, 'link'));
    symlinkSync('src/secret', join(t.root, 'link'));
    await request(t.url)
      .post(`/v1/sessions/${id}/confirmations/${pending[0]!.toolId}`)
      .send({ approved: true })
      .expect(200);
    const result = await pendingCall;
    expect(result.exitCode).toBe(1);
    expect(result.output).toContain(
      'it led to docs/x.md when its permission was checked and leads to src/secret/x.md now',
    );
    expect(result.output).not.toContain('TOP-SECRET');
  });
});

import { spawn } from 'node:child_process';
import { closeSync, existsSync, lstatSync, mkdirSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeConfigSchema } from '../../src/config/code-config.js';
import { detectSandbox } from '../../src/runtime/sandbox/detect-sandbox.js';
import type { PreparedCommand } from '../../src/runtime/sandbox/sandbox.js';
import { resolveRunAs, type RunAsUser } from '../../src/runtime/sandbox/run-as.js';
import { homeName } from '../../src/runtime/sandbox/sandbox-homes.js';
import { startServer } from '../../src/server/start-server.js';
import { bwrapWorks, hostProcessesWith } from '../sandbox/sandbox-helpers.js';
import { eventually } from '../support/run-helpers.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';

const HAVE_BWRAP = bwrapWorks();
const ROOT = process.getuid?.() === 0;
const runAs: RunAsUser | undefined = ROOT ? (await resolveRunAs(undefined)).user : undefined;
if (!HAVE_BWRAP) console.warn('run_as tests skipped: bubblewrap (bwrap) is not installed or user namespaces are off');
else if (!ROOT)
  console.warn('run_as tests skipped: the server does not run as root here (commands already run unprivileged)');
else if (!runAs)
  console.warn('run_as tests skipped: the a3s-sandbox user does not exist (scripts/install-test-deps.sh creates it)');

const A = 'token-runas-tenant-a-000001';
const B = 'token-runas-tenant-b-000001';
const TOKENS = [
  { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions', 'host_direct'] },
  { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions', 'host_direct'] },
];
const as = (token: string) => ({ authorization: `Bearer ${token}` });

interface ToolAnswer {
  output: string;
  exitCode: number;
}

async function tool(t: TestServer, id: string, name: string, args: Record<string, unknown>): Promise<ToolAnswer> {
  return (await request(t.url).post(`/v1/sessions/${id}/tools/${name}`).set(as(A)).send({ args }).expect(200))
    .body as ToolAnswer;
}

describe.skipIf(!HAVE_BWRAP || !ROOT || !runAs)(
  'a root server runs contained commands as sandbox.run_as (HTTP, sandbox required)',
  () => {
    const user = runAs as RunAsUser;
    let t: TestServer;
    let id = '';
    let workspace = '';
    beforeAll(async () => {
      t = await startTestServer({ config: { apiTokens: TOKENS, sandbox: { mode: 'required' } } });
      const created = (await request(t.url).post('/v1/sessions').set(as(A)).send({}).expect(201)).body.session;
      id = created.id;
      workspace = created.workspace;
    });
    afterAll(async () => {
      await t?.close();
    });

    it("the tenant's directory and the session's home belong to run_as, 0700", async () => {
      const tenantDir = join(t.root, 'tenant-a');
      expect(workspace).toBe(tenantDir);
      const stats = statSync(tenantDir);
      expect([stats.uid, stats.gid, stats.mode & 0o777]).toEqual([user.uid, user.gid, 0o700]);
      await tool(t, id, 'bash', { command: 'true' });
      const home = statSync(join(t.dataDir, 'sandbox', 'homes', homeName('tenant-a', id)));
      expect([home.uid, home.mode & 0o777]).toEqual([user.uid, 0o700]);
    });

    // The write tool must create through ctx.files (WorkspaceFiles chowns to ToolInvokerDeps.fileOwner).
    it("bash edits what the write tool created (files and parent directories belong to run_as); nothing new is root's", async () => {
      await tool(t, id, 'write', { file_path: 'notes/deep/a.txt', content: 'alpha\n' });
      for (const path of ['notes', 'notes/deep', 'notes/deep/a.txt'])
        expect(statSync(join(workspace, path)).uid, path).toBe(user.uid);
      const out = await tool(t, id, 'bash', {
        command:
          'echo beta >> notes/deep/a.txt && sed -i s/alpha/ALPHA/ notes/deep/a.txt && mkdir -p made/here && echo x > made/here/b.txt && cat notes/deep/a.txt',
      });
      expect(out.exitCode).toBe(0);
      expect(readFileSync(join(workspace, 'notes/deep/a.txt'), 'utf8')).toBe('ALPHA\nbeta\n');
      for (const path of ['made', 'made/here', 'made/here/b.txt'])
        expect(lstatSync(join(workspace, path)).uid, path).toBe(user.uid);
    });

    it('cp /usr/bin/env ./x && chmod 4755 ./x leaves no root-owned setuid file on the host', async () => {
      const out = await tool(t, id, 'bash', { command: 'cp /usr/bin/env ./x && chmod 4755 ./x; ls -ln ./x; echo end' });
      expect(out.output).toContain('end');
      const path = join(workspace, 'x');
      if (existsSync(path)) {
        const stats = lstatSync(path);
        // A setuid bit on run_as's file gives run_as, never root.
        expect(stats.uid).toBe(user.uid);
        expect(stats.uid === 0 && (stats.mode & 0o4000) !== 0).toBe(false);
      }
    });

    it('a command cannot create a nested user namespace (unshare -U fails inside)', async () => {
      const out = await tool(t, id, 'bash', {
        command: 'unshare -U true; echo "user=$?"; unshare -Ur id -u; echo "root=$?"',
      });
      expect(out.output).toMatch(/user=[1-9]/);
      expect(out.output).toMatch(/root=[1-9]/);
    });

    it('on the host the sandbox runs as run_as (bwrap and the command both), never as root', async () => {
      const marker = 'runas-marker-7731';
      const running = tool(t, id, 'bash', { command: `sleep 3 # ${marker}` });
      const comm = (pid: number): string => {
        try {
          return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
        } catch {
          return '';
        }
      };
      // The wrapper is root for a moment (it joins the cgroup), then execs setpriv and bwrap: look once bwrap runs.
      await eventually(
        () => hostProcessesWith(marker).some((pid) => comm(pid) === 'bwrap'),
        'the sandboxed command to start',
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      const pids = hostProcessesWith(marker);
      expect(pids.length).toBeGreaterThan(0);
      for (const pid of pids) {
        const uids = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
        expect(uids?.slice(1).map(Number)).toEqual([user.uid, user.uid, user.uid, user.uid]);
      }
      await running;
    });

    it('a root-owned workspace directory is given to run_as at the first command (only the directory: files in it keep their owner)', async () => {
      const dir = join(t.root, 'tenant-b', 'legacy');
      await request(t.url).post('/v1/sessions').set(as(B)).send({}).expect(201);
      mkdirSync(dir);
      writeFileSync(join(dir, 'root-file.txt'), 'root\n');
      const legacy = (await request(t.url).post('/v1/sessions').set(as(B)).send({ workspace: 'legacy' }).expect(201))
        .body.session.id as string;
      const out = (
        await request(t.url)
          .post(`/v1/sessions/${legacy}/tools/bash`)
          .set(as(B))
          .send({ args: { command: 'echo new > new.txt && cat root-file.txt; echo more >> root-file.txt; echo end' } })
          .expect(200)
      ).body as ToolAnswer;
      expect(out.output).toContain('root');
      expect(out.output).toContain('Permission denied');
      expect(statSync(dir).uid).toBe(user.uid);
      expect(statSync(join(dir, 'new.txt')).uid).toBe(user.uid);
      expect(statSync(join(dir, 'root-file.txt')).uid).toBe(0);
    });
  },
);

function exitOf(prepared: PreparedCommand, asUser: boolean): Promise<number | null> {
  return new Promise((resolve) => {
    const ids = asUser && prepared.uid !== undefined ? { uid: prepared.uid, gid: prepared.gid } : {};
    const child = spawn(prepared.file, [...prepared.args], {
      env: prepared.env,
      cwd: prepared.cwd,
      stdio: ['ignore', 'ignore', 'ignore', ...prepared.inheritFds],
      ...ids,
    });
    child.on('close', (code) => resolve(code));
  });
}

describe.skipIf(!HAVE_BWRAP || !ROOT || !runAs)('the sandbox wrapper fails closed', () => {
  it('a prepared command spawned without its uid (a spawn site that forgot it) refuses to run as root: exit 126', async () => {
    const detected = await detectSandbox({
      stateDir: join(tempDir('a3s-runas-state-'), 'sandbox'),
      limits: { pidsMax: 64, memoryBytes: 256 * 1024 * 1024, cpuSeconds: 10, addressSpaceBytes: 4096 * 1024 * 1024 },
      runAs: runAs as RunAsUser,
    });
    const workspace = tempDir('a3s-runas-wrapper-ws-');
    try {
      for (const asUser of [false, true]) {
        const fd = openSync(workspace, 'r');
        const prepared = await detected.sandbox.prepare({
          argv: ['/usr/bin/true'],
          workspace,
          workspaceFd: fd,
          cwd: workspace,
          tenantId: 't',
          sessionId: `s-${asUser}`,
          env: {},
          network: 'none',
        });
        try {
          expect(prepared.uid).toBe(runAs?.uid);
          expect(await exitOf(prepared, asUser)).toBe(asUser ? 0 : 126);
        } finally {
          await prepared.release();
          closeSync(fd);
        }
      }
    } finally {
      await detected.dispose();
    }
  });
});

describe.skipIf(!ROOT)('sandbox.run_as that does not exist', () => {
  it('refuses to start in required mode, naming sandbox.run_as', async () => {
    const dataDir = tempDir('a3s-runas-data-');
    const config = CodeConfigSchema.parse({
      dataDir,
      workspaceRoots: [tempDir('a3s-runas-ws-')],
      logLevel: 'silent',
      port: 0,
      sandbox: { mode: 'required', runAs: 'no-such-user-a3s' },
    });
    await expect(startServer(config, { logger: pino({ level: 'silent' }) })).rejects.toThrow(
      /sandbox\.run_as.*no-such-user-a3s/,
    );
  });
});

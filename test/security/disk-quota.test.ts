import { spawn } from 'node:child_process';
import { closeSync, linkSync, mkdirSync, openSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { eventually, toolMessage } from '../support/run-helpers.js';
import { treeSize } from '../../src/runtime/sandbox/tree-size.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';

const HAVE_BWRAP = bwrapWorks();
if (!HAVE_BWRAP)
  console.warn('disk quota tests skipped: bubblewrap (bwrap) is not installed or user namespaces are off');

const MIB = 1024 * 1024;
/** The session's disk (home + workspace growth) and the largest file one command may write. */
const CAP = 2 * MIB;

interface ToolAnswer {
  output: string;
  exitCode: number;
  metadata?: Record<string, unknown>;
}

async function bash(t: TestServer, id: string, command: string): Promise<ToolAnswer> {
  return (await request(t.url).post(`/v1/sessions/${id}/tools/bash`).send({ args: { command } }).expect(200))
    .body as ToolAnswer;
}

async function newSession(t: TestServer): Promise<string> {
  return (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id as string;
}

async function storedBytes(t: TestServer): Promise<number> {
  const text = (await request(t.url).get('/metrics').expect(200)).text;
  return [...text.matchAll(/^a3s_tenant_stored_bytes\{[^}]*\} (\d+)/gm)].reduce(
    (sum, match) => sum + Number(match[1]),
    0,
  );
}

describe('the size walk after each command (unit)', () => {
  it('counts a symlink as itself, never its target (/, a big file or a directory outside), a hard-linked file once, and stops at its bounds', async () => {
    const dir = tempDir('a3s-size-');
    const outside = tempDir('a3s-size-outside-');
    writeFileSync(join(outside, 'big.bin'), Buffer.alloc(8 * MIB, 1));
    symlinkSync('/', join(dir, 'to-root'));
    symlinkSync(join(outside, 'big.bin'), join(dir, 'to-big'));
    symlinkSync(outside, join(dir, 'to-outside'));
    writeFileSync(join(dir, 'a.bin'), Buffer.alloc(MIB, 1));
    linkSync(join(dir, 'a.bin'), join(dir, 'a-again.bin'));
    mkdirSync(join(dir, 'd', 'e'), { recursive: true });
    writeFileSync(join(dir, 'd', 'e', 'f.bin'), Buffer.alloc(MIB, 1));
    const fd = openSync(dir, 'r');
    try {
      const size = await treeSize(fd);
      expect(size.complete).toBe(true);
      expect(size.bytes).toBeGreaterThanOrEqual(2 * MIB);
      expect(size.bytes).toBeLessThan(2 * MIB + 256 * 1024);
      const shallow = await treeSize(fd, { maxEntries: 1000, maxDepth: 0 });
      expect(shallow.complete).toBe(false);
      expect(shallow.bytes).toBeLessThan(2 * MIB);
      const few = await treeSize(fd, { maxEntries: 2, maxDepth: 64 });
      expect(few.complete).toBe(false);
    } finally {
      closeSync(fd);
    }
  });

  it('a directory swapped for a symlink to / while the walk runs is never walked (the race, 2 s)', async () => {
    const dir = tempDir('a3s-size-race-');
    mkdirSync(join(dir, 'd'));
    writeFileSync(join(dir, 'd', 'small.bin'), Buffer.alloc(64 * 1024, 1));
    const swapper = spawn(
      '/bin/sh',
      ['-c', 'cd "$1" && while :; do mv -T d real && ln -s / d && rm d && mv -T real d; done', 'swapper', dir],
      { stdio: 'ignore' },
    );
    const fd = openSync(dir, 'r');
    try {
      const until = Date.now() + 2000;
      let walks = 0;
      while (Date.now() < until) {
        const size = await treeSize(fd);
        expect(size.bytes).toBeLessThan(MIB);
        walks += 1;
      }
      expect(walks).toBeGreaterThan(10);
    } finally {
      swapper.kill('SIGKILL');
      closeSync(fd);
    }
  });
});

describe.skipIf(!HAVE_BWRAP)('disk used by sandboxed commands is bounded (HTTP, sandbox required)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      config: {
        sandbox: { mode: 'required' },
        limits: { sandboxHomeBytes: CAP, minFreeDiskBytes: 0 },
        defaultTenantQuota: { maxStoredBytes: 1024 * MIB },
      },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a command writing one file over the cap is stopped: File size limit exceeded, in the workspace, $HOME and /tmp alike', async () => {
    const id = await newSession(t);
    for (const where of ['big.bin', '~/big.bin', '/tmp/big.bin']) {
      const out = await bash(
        t,
        id,
        `head -c ${CAP + MIB} /dev/zero > ${where}; echo "rc=$?"; stat -c %s ${where}; rm -f ${where}`,
      );
      expect(out.output).toContain('File size limit exceeded');
      expect(out.output).toContain('rc=153');
      expect(out.output).toContain(`\n${CAP}\n`);
    }
    // Below the cap a file is written whole.
    const small = await bash(t, id, `head -c ${MIB} /dev/zero > ok.bin; stat -c %s ok.bin; rm ok.bin`);
    expect(small.output.trim()).toBe(String(MIB));
  });

  it('writes that add up past limits.sandbox_home_bytes get DISK_QUOTA_EXCEEDED on the next command; the run goes on; freeing space lifts it', async () => {
    const id = await newSession(t);
    const before = await storedBytes(t);
    // Each command is under the per-file cap; together (home and workspace) they are over the session's bound.
    expect((await bash(t, id, 'head -c 900000 /dev/zero > ~/cache.bin && echo ok')).output).toContain('ok');
    expect((await bash(t, id, 'head -c 900000 /dev/zero > w1.bin && echo ok')).output).toContain('ok');
    // Measured after each command, in the background: the tenant's stored bytes count the session's disk.
    await eventually(
      async () => (await storedBytes(t)) >= before + 1_700_000,
      'the home and workspace growth in the stored bytes',
    );
    expect((await bash(t, id, 'head -c 900000 /dev/zero > w2.bin && echo ok')).output).toContain('ok');
    // The measurement after the last command is awaited by the next one: no race lets it through.
    const refused = await bash(t, id, 'echo should-not-run');
    expect(refused.exitCode).not.toBe(0);
    expect(refused.output).not.toContain('should-not-run');
    expect(refused.output).toContain('DISK_QUOTA_EXCEEDED');
    expect(refused.metadata).toMatchObject({
      reason: 'disk_quota_exceeded',
      code: 'DISK_QUOTA_EXCEEDED',
      disk: { kind: 'usage', limitBytes: CAP },
    });
    // The git tool is refused too.
    const git = (
      await request(t.url)
        .post(`/v1/sessions/${id}/tools/git`)
        .send({ args: { command: 'status' } })
        .expect(200)
    ).body as ToolAnswer;
    expect(git.output).toContain('DISK_QUOTA_EXCEEDED');

    // A model's bash call gets a tool error and the run goes on to its answer.
    t.fake.script(
      { toolCalls: [{ id: 'c_disk_model', name: 'bash', arguments: { command: 'echo model-should-not-run' } }] },
      { text: 'noted' },
    );
    const run = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'go', wait: true }).expect(200);
    expect(run.body.run.status).toBe('completed');
    expect(run.body.result.text).toBe('noted');
    expect(toolMessage(t, 'c_disk_model')).toContain('DISK_QUOTA_EXCEEDED');

    // Emptying the workspace files with the file tools brings the session under its bound: commands run again.
    for (const file of ['w1.bin', 'w2.bin'])
      await request(t.url)
        .post(`/v1/sessions/${id}/tools/write`)
        .send({ args: { file_path: file, content: '' } })
        .expect(200);
    const again = await bash(t, id, 'echo runs-again');
    expect(again.output).toContain('runs-again');
  });

  it('closing the session uncounts its disk from the tenant stored bytes', async () => {
    const id = await newSession(t);
    const before = await storedBytes(t);
    await bash(t, id, 'head -c 1000000 /dev/zero > ~/x.bin');
    await eventually(async () => (await storedBytes(t)) >= before + 1_000_000, 'the home in the stored bytes');
    await request(t.url).delete(`/v1/sessions/${id}`).expect(200);
    expect(await storedBytes(t)).toBeLessThan(before + 100_000);
  });
});

describe.skipIf(!HAVE_BWRAP)(
  'free disk under limits.min_free_disk_bytes refuses commands (HTTP, sandbox required)',
  () => {
    let t: TestServer | undefined;
    afterEach(async () => {
      await t?.close();
      t = undefined;
    });

    it('an absurdly high threshold gives DISK_QUOTA_EXCEEDED before anything runs', async () => {
      t = await startTestServer({
        config: { sandbox: { mode: 'required' }, limits: { minFreeDiskBytes: Number.MAX_SAFE_INTEGER } },
      });
      const id = await newSession(t);
      const refused = await bash(t, id, 'touch ran.txt; echo should-not-run');
      expect(refused.output).toContain('DISK_QUOTA_EXCEEDED');
      expect(refused.output).not.toContain('should-not-run');
      expect(refused.metadata).toMatchObject({
        reason: 'disk_quota_exceeded',
        code: 'DISK_QUOTA_EXCEEDED',
        disk: { kind: 'free_disk', minFreeBytes: Number.MAX_SAFE_INTEGER },
      });
      const listing = (await request(t.url).post(`/v1/sessions/${id}/tools/ls`).send({ args: {} }).expect(200))
        .body as ToolAnswer;
      expect(listing.output).not.toContain('ran.txt');
    });
  },
);

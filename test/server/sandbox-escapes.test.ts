import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapWorks, hostProcessesWith, modelBash } from '../sandbox/sandbox-helpers.js';
import { detectSandbox } from '../../src/runtime/sandbox/detect-sandbox.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';

const HAVE_BWRAP = bwrapWorks();
if (!HAVE_BWRAP)
  console.warn('sandbox escape tests skipped: bubblewrap (bwrap) is not installed or user namespaces are off');

const DB_SECRET = 'postgres://u:s3cr3t-db-pass@h/db';
const PROVIDER_KEY = 'sk-live-provider-key-0123456789';

describe.skipIf(!HAVE_BWRAP)('sandbox: model-chosen commands cannot reach the server, the host or the network', () => {
  let t: TestServer;
  let listener: Server;
  let port = 0;
  let session = '';
  const saved = { db: process.env.DATABASE_URL, key: process.env.OPENAI_API_KEY };

  beforeAll(async () => {
    // The server runs in this process: its environment is this one.
    process.env.DATABASE_URL = DB_SECRET;
    process.env.OPENAI_API_KEY = PROVIDER_KEY;
    t = await startTestServer({ config: { sandbox: { pidsMax: 64 } } });
    t.config.providers.openai!.apiKey = PROVIDER_KEY;
    mkdirSync(join(t.root, 'mine'));
    mkdirSync(join(t.root, 'theirs'));
    writeFileSync(join(t.root, 'theirs', 'secret.txt'), 'other tenant data\n');
    session = (
      await request(t.url)
        .post('/v1/sessions')
        .send({ workspace: join(t.root, 'mine') })
        .expect(201)
    ).body.session.id;
    listener = createServer((socket) => socket.end('hello from the host\n'));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as { port: number }).port;
  });
  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => listener?.close(resolve));
    if (saved.db === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = saved.db;
    if (saved.key === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = saved.key;
  });

  it('readiness and session info say which sandbox is active', async () => {
    expect((await request(t.url).get('/readyz').expect(200)).body.sandbox).toBe('bwrap');
    const info = (await request(t.url).get(`/v1/sessions/${session}`).expect(200)).body;
    expect(info.session ?? info).toMatchObject({ sandbox: 'bwrap', sandboxNetwork: 'none' });
  });

  it('/proc/$PPID/environ, /proc/1/environ and env show nothing of the server (base64 included)', async () => {
    const out = await modelBash(
      t,
      session,
      'cat /proc/$PPID/environ | base64 -w0; echo; cat /proc/1/environ | base64 -w0; echo; env | base64 -w0; echo',
    );
    const decoded = out
      .split('\n')
      .filter(Boolean)
      .map((line) => Buffer.from(line, 'base64').toString('utf8'))
      .join('\n');
    expect(decoded).toContain('HOME=/home/sandbox');
    expect(decoded).not.toContain('DATABASE_URL');
    expect(decoded).not.toContain('s3cr3t-db-pass');
    expect(decoded).not.toContain(PROVIDER_KEY);
    expect(decoded).not.toContain('OPENAI_API_KEY');
    expect(decoded).not.toMatch(/VITEST|NODE_OPTIONS|A3S_/);
  });

  it('the process list shows no host process', async () => {
    const out = await modelBash(t, session, 'ls /proc | grep -E "^[0-9]+$" | wc -l; ps -eo comm=');
    const [count, ...names] = out.trim().split('\n');
    expect(Number(count)).toBeLessThanOrEqual(5);
    expect(names.join(' ')).not.toMatch(/node|vitest|redis/);
    expect(names).toContain('bwrap');
  });

  it('the data directory, another workspace and /etc/shadow are not visible', async () => {
    const out = await modelBash(
      t,
      session,
      `ls ${t.dataDir} 2>&1; cat ${join(t.root, 'theirs', 'secret.txt')} 2>&1; ls ../theirs 2>&1; cat /etc/shadow 2>&1; ls /root 2>&1; echo end`,
    );
    expect(out).not.toContain('other tenant data');
    expect(out).not.toContain('sessions');
    expect(out).toMatch(/\/etc\/shadow: No such file or directory/);
    expect(out).toContain('end');
  });

  it('a TCP connection to a listener on 127.0.0.1 fails with network none', async () => {
    const out = await modelBash(
      t,
      session,
      `(exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3 && echo OPEN) 2>/dev/null || echo CLOSED`,
    );
    expect(out).toContain('CLOSED');
    expect(out).not.toContain('hello from the host');
  });

  it('setsid, nohup and double-forked children do not survive the command', async () => {
    const out = await modelBash(
      t,
      session,
      'setsid sleep 7301 > /dev/null 2>&1 & nohup sleep 7302 > /dev/null 2>&1 & (sleep 7303 > /dev/null 2>&1 &) ; sleep 0.2; echo started',
    );
    expect(out).toContain('started');
    // The PID namespace is gone with the command: nothing is left to reap.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(hostProcessesWith('sleep 730')).toEqual([]);
  });

  it('a fork bomb is bounded by pids.max and the server stays healthy', async (ctx) => {
    // pids.max needs a writable cgroup hierarchy; without one the server warns at start and only rlimits apply.
    const probe = await detectSandbox({
      stateDir: tempDir('a3s-forkbomb-probe-'),
      limits: { pidsMax: 32, memoryBytes: 64 * 1024 * 1024, cpuSeconds: 2, addressSpaceBytes: 4096 * 1024 * 1024 },
    });
    const cgroups = probe.cgroups;
    await probe.dispose();
    if (cgroups === 'none') {
      console.warn('fork bomb test skipped: no writable cgroup hierarchy on this machine');
      ctx.skip();
    }
    const out = await modelBash(
      t,
      session,
      'for i in $(seq 200); do sleep 7400 & done; echo spawned $(jobs -p | wc -l)',
      undefined,
      4_000,
    );
    expect(out).toMatch(/Resource temporarily unavailable|retry/);
    await request(t.url).get('/readyz').expect(200);
    expect(hostProcessesWith('sleep 7400')).toEqual([]);
  });

  it('kill -9 $PPID (and pid 1) does not kill the server', async () => {
    await modelBash(t, session, 'kill -9 $PPID; kill -9 1; echo tried');
    await request(t.url).get('/healthz').expect(200);
    const again = await modelBash(t, session, 'echo still-here');
    expect(again).toContain('still-here');
  });

  it('the normal path works inside: write a file, git status via git and bash, npm --version', async () => {
    const out = await modelBash(
      t,
      session,
      'echo made > made.txt && git init -q . && git status --short && npm --version',
    );
    expect(out).toContain('?? made.txt');
    expect(out).toMatch(/\d+\.\d+\.\d+/);
    const git = (
      await request(t.url)
        .post(`/v1/sessions/${session}/tools/git`)
        .send({ args: { command: 'status' } })
        .expect(200)
    ).body;
    expect(git.exitCode).toBe(0);
    expect(git.output).toContain('1 uncommitted change');
  });

  it("a detected verification preset runs in the sandbox: its own commands host-direct, and the model's bash attaches its report", async () => {
    const ws = join(t.root, 'node-project');
    mkdirSync(ws);
    // The test script proves where it runs: the sandbox user, and no /etc/shadow.
    writeFileSync(
      join(ws, 'package.json'),
      JSON.stringify({ name: 'p', version: '1.0.0', scripts: { test: 'id -un && test ! -e /etc/shadow' } }),
    );
    const id = (await request(t.url).post('/v1/sessions').send({ workspace: ws }).expect(201)).body.session
      .id as string;
    const presets = (await request(t.url).get(`/v1/sessions/${id}/verifications/presets`).expect(200)).body.presets as {
      id: string;
      commands: { id: string; command: string; required: boolean }[];
    }[];
    const node = presets.find((p) => p.id === 'node-default');
    expect(node?.commands.map((c) => c.command)).toContain('npm test');
    const report = (
      await request(t.url)
        .post(`/v1/sessions/${id}/verifications`)
        .send({ subject: 'preset', commands: node?.commands ?? [] })
        .expect(201)
    ).body;
    expect(report.status).toBe('passed');
    expect(report.checks[0].output_tail).toContain('sandbox');
    const out = await modelBash(t, id, 'npm test');
    expect(out).toContain('sandbox');
    const runs = (await request(t.url).get(`/v1/sessions/${id}/verifications`).expect(200)).body.reports as {
      subject: string;
      status: string;
    }[];
    expect(runs.some((r) => r.subject.startsWith('shell:') && r.status === 'passed')).toBe(true);
  });

  it('a verification run host-direct runs in the sandbox too', async () => {
    const report = (
      await request(t.url)
        .post(`/v1/sessions/${session}/verifications`)
        .send({ subject: 'sandboxed', commands: [{ id: 'who', command: 'id -un; test ! -e /etc/shadow' }] })
        .expect(201)
    ).body;
    expect(report.status).toBe('passed');
    expect(report.checks[0].output_tail).toContain('sandbox');
  });
});

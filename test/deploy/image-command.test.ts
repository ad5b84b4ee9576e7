import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { findFreePorts } from '../support/free-ports.js';
import { listening, type MainProcess } from '../support/main-process.js';
import { tempDir } from '../support/test-server.js';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import {
  canMakeContainerConditions,
  serverPid,
  startContained,
  type ContainerConditions,
} from './container-conditions.js';

/** What the Dockerfile's runtime stage says: the user, the environment and the command line. */
function imageSpec(): { user: string; env: Record<string, string>; cmd: string[]; healthcheck: string[] } {
  const text = readFileSync('Dockerfile', 'utf8').replace(/\\\n\s*/g, ' ');
  const runtime = text.slice(text.indexOf('AS runtime'));
  const env: Record<string, string> = {};
  for (const line of runtime.split('\n').filter((row) => row.startsWith('ENV '))) {
    for (const pair of line.slice(4).trim().split(/\s+/)) {
      const [key, value] = pair.split('=');
      if (key && value !== undefined) env[key] = value;
    }
  }
  const user = /^USER (\S+)$/m.exec(runtime)?.[1] ?? 'root';
  const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(runtime)?.[1] ?? '[]') as string[];
  const healthcheck = JSON.parse(/^HEALTHCHECK .*? CMD (\[.*\])$/m.exec(runtime)?.[1] ?? '[]') as string[];
  return { user, env, cmd, healthcheck };
}

/** The newest modification time of a .ts file under `dir`. */
function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const at = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(at));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(at).mtimeMs);
  }
  return newest;
}

/** dist/ as `npm run build` leaves it for the server (the console's dist/web is built by the test setup). */
function ensureBuilt(): void {
  const main = join('dist', 'src', 'main.js');
  if (existsSync(main) && statSync(main).mtimeMs >= newestSource('src')) return;
  execFileSync(process.execPath, [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
    stdio: 'inherit',
  });
  execFileSync(process.execPath, ['scripts/copy-assets.mjs'], { stdio: 'inherit' });
}

const IMAGE_UID = 1000;
/** Docker's conditions with compose's options: /proc unmasked (systempaths=unconfined), cgroups read-only, its own PID namespace. */
const CONDITIONS: ContainerConditions = { readOnlyCgroups: true, pidNamespace: true, uid: IMAGE_UID, gid: IMAGE_UID };
const SECRET_KEY = 'sk-image-provider-key-never-inside';
const TOKEN = 'image-token-0123456789abcdef';
const CAN = canMakeContainerConditions() && bwrapWorks();
if (!CAN) console.warn('image command test skipped: it needs root (unshare, setpriv to uid 1000) and a working bwrap');

describe.skipIf(!CAN)(
  "the image's command as its non-root user, with bwrap and tokens, under a container's cgroup conditions",
  () => {
    const spec = imageSpec();
    let fake: FakeProvider;
    let proc: MainProcess;
    let base: string;
    /** The server's pid on this machine (pid 1 in its own PID namespace, as a container's command). */
    let pid: number;
    const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

    beforeAll(async () => {
      ensureBuilt();
      fake = await startFakeProvider();
      const owned = (prefix: string): string => {
        const dir = tempDir(prefix);
        chownSync(dir, IMAGE_UID, IMAGE_UID);
        return dir;
      };
      const [port] = await findFreePorts(1);
      const env: Record<string, string> = {
        PATH: '/usr/local/bin:/usr/bin:/bin',
        HOME: owned('a3s-image-home-'),
        ...spec.env,
        // /data and /workspace are volumes owned by `node` in the image; here directories owned by uid 1000.
        A3S_DATA_DIR: owned('a3s-image-data-'),
        A3S_WORKSPACE_ROOTS: owned('a3s-image-ws-'),
        A3S_PORT: String(port),
        A3S_API_TOKENS: JSON.stringify([
          { token: TOKEN, principal: 'me', tenantId: 'default', scopes: ['sessions', 'host_direct'] },
        ]),
        // host_direct callers' commands stay in the sandbox (sandbox.host_direct = "sandbox", the default), said here.
        A3S_SANDBOX_HOST_DIRECT: 'sandbox',
        A3S_SANDBOX_MODE: 'required',
        // A container's cgroup file system is read-only (and not uid 1000's): what compose sets.
        A3S_SANDBOX_CGROUPS: 'optional',
        A3S_STORAGE_BACKEND: 'memory',
        OPENAI_API_KEY: SECRET_KEY,
        OPENAI_BASE_URL: fake.baseUrl,
        A3S_MODEL: 'openai/test-model',
      };
      const [program, ...args] = spec.cmd;
      proc = startContained([program === 'node' ? process.execPath : (program as string), ...args], env, CONDITIONS);
      const url = await listening(proc);
      pid = serverPid(proc, CONDITIONS);
      base = `http://127.0.0.1:${new URL(url).port}`;
    }, 120_000);

    afterAll(async () => {
      if (pid) process.kill(pid, 'SIGTERM');
      else if (proc?.child.exitCode === null) proc.child.kill('SIGKILL');
      await proc?.exited;
      await fake?.close();
    });

    it('is the image as the Dockerfile says: user node, bind 0.0.0.0, data in /data, node dist/src/main.js', () => {
      expect(spec.user).toBe('node');
      expect(spec.env).toMatchObject({ A3S_HOST: '0.0.0.0', A3S_DATA_DIR: '/data', NODE_ENV: 'production' });
      expect(spec.cmd).toEqual(['node', 'dist/src/main.js']);
      expect(readFileSync('Dockerfile', 'utf8')).toMatch(
        /apt-get install -y --no-install-recommends[^\n]*\bbubblewrap\b[^\n]*\bgit\b[^\n]*\bbash\b[^\n]*\bca-certificates\b/,
      );
    });

    it('runs as uid 1000, listens on 0.0.0.0 and answers /healthz, /readyz (bwrap) and its own HEALTHCHECK', async () => {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      expect(/^Uid:\s+(\d+)/m.exec(status)?.[1]).toBe(String(IMAGE_UID));
      // pid 1 of its PID namespace, as in the container.
      expect(/^NSpid:\s+\d+\s+(\d+)$/m.exec(status)?.[1]).toBe('1');
      expect(proc.stdout).toContain('"url":"http://0.0.0.0:');
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect(await (await fetch(`${base}/readyz`)).json()).toMatchObject({ status: 'ready', sandbox: 'bwrap' });
      expect(proc.stdout).toContain('cgroups are not writable');
      const [program, ...args] = spec.healthcheck;
      expect(program).toBe('node');
      const check = spawnSync(process.execPath, args, { env: { A3S_PORT: new URL(base).port }, timeout: 10_000 });
      expect(check.status).toBe(0);
    });

    it("a sandboxed bash call in a run works and cannot see the server's environment", async () => {
      const created = await fetch(`${base}/v1/sessions`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ permissionPolicy: { enabled: false } }),
      });
      expect(created.status).toBe(201);
      const sessionId = ((await created.json()) as { session: { id: string } }).session.id;
      // The server is pid 1 of the container; inside the sandbox pid 1 is the sandbox's own, and the server's host pid is absent.
      const command = `echo "uid=$(id -u)"; tr '\\0' '\\n' < /proc/1/environ; echo; cat /proc/${pid}/environ 2>&1 | tr '\\0' '\\n'; echo; ls /proc | grep -c '^[0-9]'; echo sandboxed > made.txt && cat made.txt`;
      fake.script({ toolCalls: [{ id: 'c_img', name: 'bash', arguments: { command } }] }, { text: 'done' });
      const run = await fetch(`${base}/v1/sessions/${sessionId}/runs`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ input: 'look around', wait: true }),
      });
      expect(run.status).toBe(200);
      expect(((await run.json()) as { run: { status: string } }).run.status).toBe('completed');
      const output = fake.requests
        .flatMap((request) => request.body.messages)
        .find((message) => message.role === 'tool' && (message as { tool_call_id?: string }).tool_call_id === 'c_img');
      const text = String(output?.content);
      expect(text).toContain('uid=1000');
      expect(text).toContain('sandboxed');
      // Inside, /proc is the sandbox's own: its pid 1 is the sandbox's, the server's pid is not there.
      expect(text).toMatch(/No such file or directory/);
      for (const secret of [SECRET_KEY, TOKEN, 'A3S_API_TOKENS', 'OPENAI_API_KEY']) expect(text).not.toContain(secret);
      const pids = Number(/\n(\d+)\nsandboxed/.exec(text)?.[1]);
      expect(pids).toBeGreaterThan(0);
      expect(pids).toBeLessThan(10);
    }, 60_000);
  },
);

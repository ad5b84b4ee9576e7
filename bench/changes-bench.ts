import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { CodeConfigSchema } from '../src/config/code-config.js';
import { CHANGE_MAX_FILE_BYTES, CHANGE_MAX_FILES, CHANGE_MAX_PATCH_BYTES } from '../src/create-change-capture.js';
import { ShadowStores, type CaptureTarget } from '../src/runtime/changes/shadow-stores.js';
import { startSandbox, type StartedSandbox } from '../src/runtime/sandbox/start-sandbox.js';
import { pinDirectory, WorkspaceDirectory } from '../src/runtime/workspace/workspace-directory.js';
import { numberFlag, type BenchArgs } from './bench-args.js';
import { percentile, round } from './bench-stats.js';

/** How many files are changed per run. */
const CHANGED = 3;

/** CPU ms of this process (the server's part of a capture; git runs in the sandbox's processes). */
function cpuMs(): { server: number } {
  const { user, system } = process.cpuUsage();
  return { server: (user + system) / 1000 };
}

/** A workspace of `count` small files, 100 per directory. */
function makeWorkspace(root: string, count: number): string {
  const ws = join(root, `ws-${count}`);
  for (let n = 0; n < count; n++) {
    const dir = join(ws, `d${Math.floor(n / 100)}`);
    if (n % 100 === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${n}.txt`), `file ${n}\n`.repeat(8));
  }
  return ws;
}

/** ms of one server command that does nothing (`true`): the sandbox start every capture pays once. */
async function sandboxStartMs(sandbox: StartedSandbox, target: CaptureTarget, store: string): Promise<number> {
  const server = sandbox.sandbox.prepareServerCommand;
  if (!server) return 0;
  const lease = target.workspace.acquire();
  try {
    const started = performance.now();
    const prepared = await server.call(sandbox.sandbox, {
      argv: ['/bin/true'],
      workspace: lease.path,
      workspaceFd: lease.fd,
      writable: { host: store, inside: '/shadow' },
      env: {},
    });
    await new Promise<void>((resolve, reject) => {
      const child = spawn(prepared.file, [...prepared.args], {
        cwd: prepared.cwd,
        env: prepared.env,
        stdio: ['ignore', 'ignore', 'ignore', prepared.inheritFds[0] ?? lease.fd],
        ...(prepared.uid !== undefined ? { uid: prepared.uid, gid: prepared.gid } : {}),
      });
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`sandbox true exited ${code}`))));
    });
    return performance.now() - started;
  } finally {
    lease.release();
  }
}

/** One workspace size: the first (cold) capture, then `runs` runs of base + CHANGED edits + result with its diff. */
async function measureSize(
  shadows: ShadowStores,
  sandbox: StartedSandbox,
  root: string,
  files: number,
  runs: number,
): Promise<Record<string, number>> {
  const ws = makeWorkspace(root, files);
  const workspace = new WorkspaceDirectory(pinDirectory(realpathSync(ws)));
  const target: CaptureTarget = { tenantId: 'bench', sessionId: `files-${files}`, workspace, hostCommands: false };
  const coldStart = performance.now();
  await shadows.capture(target);
  const coldMs = performance.now() - coldStart;
  // Files changed within a second of a capture's start are given to git again at the next one (its stat cache
  // decides: a change in the same clock tick leaves the stat data equal). A workspace just written is all such:
  // the runs measure the warm case, a workspace whose files are older than that (docs/changes.md "Cost").
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const starts: number[] = [];
  for (let n = 0; n < 10; n++)
    starts.push(await sandboxStartMs(sandbox, target, shadows.pathOf('bench', `files-${files}`)));
  const perRun: number[] = [];
  const before = cpuMs();
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    const base = await shadows.capture(target);
    for (let k = 0; k < CHANGED; k++) {
      const n = (run * 7919 + k * 104_729) % files;
      writeFileSync(join(ws, `d${Math.floor(n / 100)}`, `f${n}.txt`), `changed by run ${run}\n`);
    }
    const result = await shadows.capture(target, base.tree);
    perRun.push(performance.now() - started);
    if (result.tree === base.tree) throw new Error('the run changed nothing');
  }
  const after = cpuMs();
  starts.sort((a, b) => a - b);
  perRun.sort((a, b) => a - b);
  const start = percentile(starts, 50);
  const p50 = percentile(perRun, 50);
  return {
    files,
    runs,
    cold_capture_ms: round(coldMs, 1),
    sandbox_start_p50_ms: round(start, 1),
    run_capture_p50_ms: round(p50, 1),
    run_capture_p99_ms: round(percentile(perRun, 99), 1),
    // Two captures per run (base, result): two sandbox starts to take away.
    run_capture_p50_ms_without_sandbox_starts: round(p50 - 2 * start, 1),
    server_cpu_ms_per_run: round((after.server - before.server) / runs, 2),
  };
}

/**
 * `changes`: the cost of change capture per run (a base capture, a few files changed, a result capture with its
 * diff) on workspaces of 2,000 and 50,000 files, in the real sandbox, git's stat cache warm; the sandbox start
 * (`true` as a server command) reported beside. In process, no HTTP: the capture is what is measured.
 */
export async function runChangesBench(args: BenchArgs): Promise<Record<string, unknown>> {
  const runs = numberFlag(args, 'runs', 20);
  const sizes = (args.flags.get('files') ?? '2000,50000').split(',').map(Number);
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'a3s-bench-changes-')));
  // A root server's sandbox runs as sandbox.run_as, which passes through to the workspaces.
  if (process.getuid?.() === 0) chmodSync(root, 0o711);
  const dataDir = join(root, 'data');
  const config = CodeConfigSchema.parse({
    defaultModel: 'openai/bench-model',
    providers: { openai: { apiKey: 'sk-bench', baseUrl: 'http://127.0.0.1:9/v1', maxRetries: 0 } },
    dataDir,
    workspaceRoots: [root],
    logLevel: 'silent',
  });
  const sandbox = await startSandbox(config, pino({ level: 'silent' }));
  try {
    const shadows = new ShadowStores(join(dataDir, 'changes'), sandbox, {
      exclude: config.limits.changeCaptureExclude,
      maxFileBytes: CHANGE_MAX_FILE_BYTES,
      maxFiles: CHANGE_MAX_FILES,
      maxPatchBytes: CHANGE_MAX_PATCH_BYTES,
    });
    if (sandbox.sandbox.kind !== 'bwrap') throw new Error('the changes benchmark needs a working bubblewrap sandbox');
    const results: Record<string, number>[] = [];
    for (const files of sizes) results.push(await measureSize(shadows, sandbox, root, files, runs));
    return { benchmark: 'changes', sandbox: sandbox.sandbox.kind, changed_files_per_run: CHANGED, sizes: results };
  } finally {
    await sandbox.dispose?.();
    rmSync(root, { recursive: true, force: true });
  }
}

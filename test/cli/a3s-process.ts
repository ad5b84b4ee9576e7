import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from '../support/test-server.js';

const REPO = process.cwd();

/**
 * Compile the CLI (src/cli/a3s.ts and what it imports: the client, the protocol) with the repository's tsconfig
 * into a temp directory laid out like the package (`<dir>/src/cli/a3s.js`, its package.json beside, node_modules
 * linked), so tests run the built JavaScript, not the TypeScript, without touching the shared dist/. Answers the
 * path of the built a3s.js.
 */
export function buildCli(): string {
  const dir = tempDir('a3s-cli-build-');
  const out = join(dir, 'pkg');
  mkdirSync(out);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: join(REPO, 'tsconfig.json'),
      compilerOptions: { outDir: out, rootDir: REPO, incremental: false, sourceMap: false, noEmitOnError: false },
      files: [join(REPO, 'src', 'cli', 'a3s.ts')],
      include: [],
    }),
  );
  const tsc = spawnSync(
    process.execPath,
    [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')],
    { encoding: 'utf8' },
  );
  const entry = join(out, 'src', 'cli', 'a3s.js');
  if (!existsSync(entry)) throw new Error(`building the CLI failed: ${tsc.stdout} ${tsc.stderr}`);
  copyFileSync(join(REPO, 'package.json'), join(out, 'package.json'));
  symlinkSync(join(REPO, 'node_modules'), join(out, 'node_modules'));
  return entry;
}

/** Remove a build of buildCli (its temp directory; the linked node_modules stays). */
export function removeCli(entry: string): void {
  rmSync(dirname(dirname(dirname(dirname(entry)))), { recursive: true, force: true });
}

/** What one `a3s` process did. */
export interface A3sResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Options of runA3s and startA3s: the environment (only these variables, plus PATH), stdin, a timeout. */
export interface A3sOptions {
  env?: Record<string, string>;
  stdin?: string;
  cwd?: string;
  timeoutMs?: number;
  /** Run this shell command line instead of the CLI itself (e.g. the CLI under `script` for a terminal). */
  shell?: string;
  /** Leave stdin open (without `stdin`) for the test to write to `child.stdin` as it goes. */
  keepStdinOpen?: boolean;
}

/** A running `a3s` process with its output so far. */
export interface A3sProcess {
  child: ChildProcessWithoutNullStreams;
  readonly stdout: string;
  readonly stderr: string;
  exited: Promise<A3sResult>;
}

/** Start the built CLI with `args`, in a clean environment (PATH, and HOME only when given). */
export function startA3s(entry: string, args: readonly string[], options: A3sOptions = {}): A3sProcess {
  const env = { PATH: process.env.PATH ?? '', ...options.env };
  const child =
    options.shell !== undefined
      ? spawn('sh', ['-c', options.shell], { env, cwd: options.cwd ?? REPO })
      : spawn(process.execPath, [entry, ...args], { env, cwd: options.cwd ?? REPO });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  if (options.stdin !== undefined) child.stdin.end(options.stdin);
  else if (!options.keepStdinOpen) child.stdin.end();
  const timeout = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
  const exited = new Promise<A3sResult>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timeout);
      resolve({ code, stdout, stderr });
    }),
  );
  return {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited,
  };
}

/** Run the built CLI to its end. */
export function runA3s(entry: string, args: readonly string[], options: A3sOptions = {}): Promise<A3sResult> {
  return startA3s(entry, args, options).exited;
}

import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { findFreePorts } from '../test/support/free-ports.js';

/** The built server entry (`dist/src/main.js`), resolved from this file's place in dist/bench. */
export const BUILT_MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));

/** A server process started from the build, with the tail of its output kept for diagnosis. */
export interface ServerProcess {
  child: ChildProcess;
  pid: number;
  url: string;
  /** The last 16 KiB of stdout and stderr. */
  output(): string;
  /** Exit code or signal once the process has exited, else undefined. */
  exitStatus(): string | undefined;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
  /** SIGTERM (SIGKILL after 10 s) and wait for the exit. */
  stop(): Promise<void>;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
}

const TAIL_BYTES = 16 * 1024;

/**
 * Starts `node dist/src/main.js` with only `env` (plus PATH and HOME; warn-level logs unless A3S_LOG_LEVEL
 * is set, so request logs do not cost the measured server CPU) on a free loopback port, and resolves once
 * /healthz answers; rejects if it exits first or takes 30 s.
 */
export async function startServerProcess(
  env: Record<string, string>,
  options: { nodeArgs?: string[] } = {},
): Promise<ServerProcess> {
  const [port] = await findFreePorts(1);
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), BUILT_MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      A3S_LOG_LEVEL: 'warn',
      ...env,
      A3S_HOST: '127.0.0.1',
      A3S_PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const collect = (chunk: Buffer): void => {
    tail = (tail + chunk.toString('utf8')).slice(-TAIL_BYTES);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let status: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      status = signal ?? String(code);
      resolve();
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (status !== undefined) throw new Error(`server exited (${status}) before listening:\n${tail}`);
    const health = await fetch(`${url}/healthz`).then(
      (r) => r.status,
      () => 0,
    );
    if (health === 200) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not answer /healthz within 30 s:\n${tail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const signalAndWait = async (signal: NodeJS.Signals, graceMs: number): Promise<void> => {
    if (status !== undefined) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  return {
    child,
    pid: child.pid as number,
    url,
    output: () => tail,
    exitStatus: () => status,
    exited,
    stop: () => signalAndWait('SIGTERM', 10_000),
    kill: () => signalAndWait('SIGKILL', 5_000),
  };
}

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';

const VITE_NODE = join(process.cwd(), 'node_modules', 'vite-node', 'vite-node.mjs');
const MAIN = join(process.cwd(), 'src', 'main.ts');

/** A server process started from src/main.ts (through vite-node), with its output collected. */
export interface MainProcess {
  child: ChildProcessWithoutNullStreams;
  stdout: string;
  stderr: string;
  exited: Promise<number | null>;
}

/** Start `src/main.ts` in a child process with only the given environment (plus PATH and HOME). */
export function startMain(env: Record<string, string>): MainProcess {
  const child = spawn(process.execPath, [VITE_NODE, MAIN], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', A3S_LOG_LEVEL: 'info', ...env },
    cwd: process.cwd(),
  });
  const proc: MainProcess = {
    child,
    stdout: '',
    stderr: '',
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
  };
  child.stdout.on('data', (d: Buffer) => (proc.stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (proc.stderr += d.toString()));
  return proc;
}

/** Wait for the "listening" log line and return the server URL. */
export async function listening(proc: MainProcess): Promise<string> {
  for (let i = 0; i < 600; i++) {
    const match = /"url":"(http:\/\/[^"]+)"/.exec(proc.stdout);
    if (match) return match[1];
    if (proc.child.exitCode !== null) throw new Error(`server exited: ${proc.stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`server did not start: ${proc.stdout} ${proc.stderr}`);
}

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FakeProvider } from '../support/fake-provider.js';
import { tempDir } from '../support/test-server.js';

export const REPO = process.cwd();
const RECORDER = join(REPO, 'test', 'support', 'import-recorder.mjs');
export const VITE_NODE = join(REPO, 'node_modules', 'vite-node', 'vite-node.mjs');
export const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
export const CALLER_SPAN = '00f067aa0ba902b7';
export const PROMPT = 'Summarize the quarterly-plan-zebra file';
export const ANSWER = 'The plan says: ship the giraffe feature.';

export interface TracedServer {
  child: ChildProcessWithoutNullStreams;
  url: string;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * The server from source in a child process (tracing is process-wide), recording which SDK modules it loads in
 * `importLog`; `args` are main's (`--config FILE`).
 */
export async function startTracedServer(
  env: Record<string, string>,
  importLog: string,
  args: readonly string[] = [],
): Promise<TracedServer> {
  const child = spawn(process.execPath, ['--import', RECORDER, VITE_NODE, join(REPO, 'src', 'main.ts'), ...args], {
    cwd: REPO,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: tempDir('a3s-otel-home-'),
      A3S_PORT: '0',
      A3S_IMPORT_LOG: importLog,
      ...env,
    },
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  for (let i = 0; i < 1200 && !/"url":"http/.test(out); i++) {
    if (child.exitCode !== null) throw new Error(`the server exited: ${out}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const url = /"url":"(http:\/\/[^"]+)"/.exec(out)?.[1];
  if (!url) throw new Error(`the server did not start: ${out}`);
  return {
    child,
    url,
    output: () => out,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      await exited;
    },
  };
}

export async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A provider, a model, a data directory and a workspace root holding one file whose name and text are "secret". */
export function baseEnv(fake: FakeProvider, dataDir = tempDir('a3s-otel-data-')): Record<string, string> {
  return {
    OPENAI_API_KEY: 'sk-otel-test-key',
    OPENAI_BASE_URL: fake.baseUrl,
    A3S_MODEL: 'openai/test-model',
    A3S_DATA_DIR: dataDir,
    A3S_WORKSPACE_ROOTS: workspaceRoot(),
  };
}

function workspaceRoot(): string {
  const root = tempDir('a3s-otel-ws-');
  writeFileSync(join(root, 'quarterly-plan-zebra.md'), 'ship the giraffe feature\n');
  return root;
}

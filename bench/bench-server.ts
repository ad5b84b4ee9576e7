import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { CodeConfigSchema } from '../src/config/code-config.js';
import { startServer, type RunningServer } from '../src/server/start-server.js';

/** The file every bench workspace holds, which the runs benchmark's model reads. */
export const BENCH_FILE = { path: 'notes.txt', content: 'alpha\nbeta\ngamma\n' } as const;

/** An in-process server on a loopback port with the memory store and a temp workspace root. */
export interface BenchServer {
  server: RunningServer;
  url: string;
  /** The workspace root (canonical): a session created with no workspace works there. */
  root: string;
  close(): Promise<void>;
}

/** Options of startBenchServer. */
export interface BenchServerOptions {
  providerBaseUrl: string;
  /** Overrides of `limits` (e.g. subscriberBufferEvents). */
  limits?: Record<string, number>;
  /** The `sandbox` config block (e.g. host_direct "none" for the unsandboxed baseline). */
  sandbox?: Record<string, unknown>;
  /** The store (default memory; `file` keeps snapshots, checkpoints and attachments on disk under the data dir). */
  storageBackend?: 'memory' | 'file';
  /** Model blocks of the bench provider (e.g. `{"bench-model": {modalities: {input: ["text", "image"]}}}`). */
  models?: Record<string, unknown>;
}

/** Starts the server as the benchmarks measure it: memory store, silent logger, zero-latency provider. */
export async function startBenchServer(options: BenchServerOptions): Promise<BenchServer> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'a3s-bench-ws-')));
  const dataDir = realpathSync(mkdtempSync(join(tmpdir(), 'a3s-bench-data-')));
  writeFileSync(join(root, BENCH_FILE.path), BENCH_FILE.content);
  const config = CodeConfigSchema.parse({
    defaultModel: 'openai/bench-model',
    providers: {
      openai: {
        apiKey: 'sk-bench',
        baseUrl: options.providerBaseUrl,
        maxRetries: 0,
        ...(options.models ? { models: options.models } : {}),
      },
    },
    storageBackend: options.storageBackend ?? 'memory',
    dataDir,
    host: '127.0.0.1',
    port: 0,
    workspaceRoots: [root],
    logLevel: 'silent',
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  });
  const server = await startServer(config, { logger: pino({ level: 'silent' }) });
  return {
    server,
    url: server.url,
    root,
    async close() {
      await server.close();
      rmSync(root, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

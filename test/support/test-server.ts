import { chmodSync, mkdtempSync, mkdirSync, writeFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pino, type Logger } from 'pino';
import { CodeConfigSchema, type CodeConfig } from '../../src/config/code-config.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import type { SessionStore } from '../../src/stores/session-store.js';
import type { ScheduleClock } from '../../src/runtime/schedules/schedule-clock.js';
import { startFakeProvider, type FakeProvider } from './fake-provider.js';

/** A server on a random loopback port with a temp data dir, a temp workspace root and a fake provider. */
export interface TestServer {
  server: RunningServer;
  url: string;
  fake: FakeProvider;
  dataDir: string;
  /** Canonical path of the workspace root. */
  root: string;
  config: CodeConfig;
  /** Close the server (the fake provider too, unless it was passed in). */
  close(): Promise<void>;
}

/** Options for startTestServer. */
export interface TestServerOptions {
  fake?: FakeProvider;
  dataDir?: string;
  root?: string;
  files?: Record<string, string>;
  config?: Partial<Record<keyof CodeConfig, unknown>>;
  store?: SessionStore;
  /** The server's logger (default: silent). */
  logger?: Logger;
  /** The schedules' clock (default: the wall clock). */
  scheduleClock?: ScheduleClock;
}

/**
 * Make a temp directory (canonical path). As root it is made searchable by others (0711, nothing listable), as an
 * operator makes workspace roots for sandbox.run_as: a root server's commands run as that user, whose bwrap resolves
 * the workspace's path.
 */
export function tempDir(prefix = 'a3s-test-'): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  if (process.getuid?.() === 0) chmodSync(dir, 0o711);
  return dir;
}

/** Write files (relative path -> content) under a directory. */
export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

/** Start a server for a test. */
/** The cluster secret of test servers on Redis (in process and, through A3S_CLUSTER_SECRET, as processes). */
export const TEST_CLUSTER_SECRET = 'test-cluster-secret-0123456789abcdef';

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const fake = options.fake ?? (await startFakeProvider());
  const dataDir = options.dataDir ?? tempDir('a3s-data-');
  const root = options.root ?? tempDir('a3s-ws-');
  if (options.files) writeFiles(root, options.files);
  const config = CodeConfigSchema.parse({
    defaultModel: 'openai/test-model',
    providers: { openai: { apiKey: 'sk-test', baseUrl: fake.baseUrl, maxRetries: 0 } },
    dataDir,
    sessionsDir: join(dataDir, 'sessions'),
    host: '127.0.0.1',
    port: 0,
    workspaceRoots: [root],
    logLevel: 'silent',
    // Most tests exercise the loop, not governance: they run with the policy disabled. The governance
    // tests set their own policy (and one of them checks the built-in default).
    defaultPermissionPolicy: { enabled: false },
    ...options.config,
    // Redis needs the cluster's shared secret; tests that do not name one share TEST_CLUSTER_SECRET.
    ...(options.config?.redisUrl !== undefined || options.config?.redis !== undefined
      ? {
          cluster: {
            secret: TEST_CLUSTER_SECRET,
            peerUrls: ['http://127.0.0.1:*'],
            ...(options.config.cluster as object | undefined),
          },
        }
      : {}),
  });
  const server = await startServer(config, {
    logger: options.logger ?? pino({ level: 'silent' }),
    ...(options.store ? { store: options.store } : {}),
    ...(options.scheduleClock ? { scheduleClock: options.scheduleClock } : {}),
  });
  return {
    server,
    url: server.url,
    fake,
    dataDir,
    root,
    config,
    close: async () => {
      await server.close();
      if (!options.fake) await fake.close();
    },
  };
}

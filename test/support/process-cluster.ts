import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeProvider, type FakeProvider } from './fake-provider.js';
import { listening, startMain, type MainProcess } from './main-process.js';
import { redisServerEnv } from './redis-target.js';
import { tempDir } from './test-server.js';

/** Two server processes (node-a, node-b) on the target Redis, one workspace root, a short node and lease TTL. */
export interface ProcessCluster {
  a: MainProcess;
  b: MainProcess;
  urlA: string;
  urlB: string;
  fake: FakeProvider;
  root: string;
  /** SIGKILL every process still running and close the fake provider. */
  close(): Promise<void>;
}

/** Start the two nodes with `config` (JSON config file, merged over a short `cluster` TTL and no default policy). */
export async function startProcessCluster(config: Record<string, unknown> = {}): Promise<ProcessCluster> {
  const fake = await startFakeProvider();
  const root = tempDir('a3s-ws-');
  const configFile = join(tempDir('a3s-cfg-'), 'cluster.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      cluster: { leaseTtlMs: 1200, nodeTtlMs: 1200 },
      defaultPermissionPolicy: { enabled: false },
      ...config,
    }),
  );
  const env = {
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: fake.baseUrl,
    A3S_MODEL: 'openai/test-model',
    A3S_PORT: '0',
    A3S_WORKSPACE_ROOTS: root,
    ...redisServerEnv(),
    A3S_REDIS_KEY_PREFIX: `a3s-state-${Math.random().toString(36).slice(2)}:`,
    A3S_CONFIG: configFile,
  };
  const a = startMain({ ...env, A3S_DATA_DIR: tempDir('a3s-a-'), A3S_NODE_ID: 'node-a' });
  const b = startMain({ ...env, A3S_DATA_DIR: tempDir('a3s-b-'), A3S_NODE_ID: 'node-b' });
  const close = async () => {
    for (const p of [a, b]) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await fake.close();
  };
  try {
    return { a, b, urlA: await listening(a), urlB: await listening(b), fake, root, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Retry `attempt` every 100 ms until `ok` holds or `timeoutMs` passes; returns the last value. */
export async function retry<T>(attempt: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await attempt();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

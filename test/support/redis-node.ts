import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';

/** The error message when Debian's Redis binaries are not on PATH. */
export const REDIS_NOT_INSTALLED =
  'redis-server / redis-cli are not installed: apt-get install -y redis-server (the tests need a real Redis)';

const READY_TIMEOUT_MS = 10_000;

/** Start `redis-server <args>` on 127.0.0.1:`port` and resolve once it answers PING, authenticating with `password` if given (throws with its output when it exits first). */
export async function launchRedisNode(port: number, args: readonly string[], password?: string): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--protected-mode', 'no', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new Error(REDIS_NOT_INSTALLED) : error),
    );
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const pong = await redisCommand(port, ['PING'], password).catch(() => undefined);
    if (pong === 'PONG') break;
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`redis-server on port ${port} exited before it was ready:\n${output}`);
    if (Date.now() > deadline) {
      await killRedisNode(child);
      throw new Error(`redis-server on port ${port} did not answer PING within ${READY_TIMEOUT_MS} ms:\n${output}`);
    }
    await sleep(20);
  }
  // Drop later output so a long-running node never fills an unread pipe.
  child.stdout?.resume();
  child.stderr?.resume();
  return child;
}

/** SIGKILL a node (like a crash) and resolve once it has exited. */
export async function killRedisNode(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

/** Send one command to the node on 127.0.0.1:`port` over a fresh connection that never retries or reconnects (with `password` when the node requires one). */
export async function redisCommand(
  port: number,
  args: readonly [string, ...(string | number)[]],
  password?: string,
): Promise<unknown> {
  const redis = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    connectTimeout: 1000,
    commandTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    ...(password === undefined ? {} : { password }),
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    const [name, ...rest] = args;
    return await redis.call(name, ...rest);
  } finally {
    redis.disconnect();
  }
}

/** Resolve after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

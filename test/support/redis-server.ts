import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findFreePorts } from './free-ports.js';

/** A throwaway redis-server on a loopback port, started by startRedisServer. */
export interface RedisServerHandle {
  /** Connection URL, e.g. redis://127.0.0.1:40123. */
  readonly url: string;
  /** The loopback port it listens on (kept across restarts). */
  readonly port: number;
  /** Stop the server (SIGTERM, SIGKILL after 5 s); idempotent. */
  stop(): Promise<void>;
  /**
   * Kill the server (SIGKILL, like a crash; without persistence its data is gone), stay down for
   * `downMs` (default 0), then start it again on the same port and wait until it answers PING.
   */
  restart(options?: { downMs?: number }): Promise<void>;
}

/** Options for startRedisServer. */
export interface StartRedisServerOptions {
  /** The server binary (default "redis-server" from PATH). */
  binary?: string;
}

const NOT_INSTALLED = 'redis-server is not installed: apt-get install -y redis-server (the tests need a real Redis)';
const READY_TIMEOUT_MS = 10_000;

/**
 * Start a redis-server without persistence on a free 127.0.0.1 port and resolve once it answers PING;
 * throws with an install hint when the binary is missing.
 */
export async function startRedisServer(options: StartRedisServerOptions = {}): Promise<RedisServerHandle> {
  const binary = options.binary ?? 'redis-server';
  const dir = await mkdtemp(path.join(tmpdir(), 'a3s-redis-'));
  let child: ChildProcess | undefined;
  let port = 0;
  // A port found free can be taken before redis binds it; try a few before giving up.
  for (let attempt = 1; child === undefined; attempt += 1) {
    [port] = await findFreePorts(1);
    try {
      child = await launch(binary, port, dir);
    } catch (error) {
      if (attempt >= 3 || (error instanceof Error && error.message === NOT_INSTALLED)) {
        await rm(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }
  // Never leave an orphan redis-server behind when the test process exits without teardown.
  const killOnExit = (): void => {
    child?.kill('SIGKILL');
  };
  process.on('exit', killOnExit);

  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      process.off('exit', killOnExit);
      const running = child;
      child = undefined;
      if (running !== undefined) await terminate(running, 'SIGTERM');
      await rm(dir, { recursive: true, force: true });
    },
    async restart(restartOptions = {}) {
      const running = child;
      if (running === undefined) throw new Error('restart() after stop()');
      child = undefined;
      await terminate(running, 'SIGKILL');
      if ((restartOptions.downMs ?? 0) > 0) await sleep(restartOptions.downMs ?? 0);
      child = await launch(binary, port, dir);
    },
  };
}

async function launch(binary: string, port: number, dir: string): Promise<ChildProcess> {
  const child = spawn(
    binary,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--protected-mode',
      'no',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new Error(NOT_INSTALLED) : error),
    );
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await answersPing(port))) {
    if (exited) throw new Error(`redis-server on port ${port} exited before it was ready:\n${output}`);
    if (Date.now() > deadline) {
      await terminate(child, 'SIGKILL');
      throw new Error(`redis-server on port ${port} did not answer PING within ${READY_TIMEOUT_MS} ms:\n${output}`);
    }
    await sleep(20);
  }
  // Drop later output so a long-running server never fills an unread pipe.
  child.stdout?.resume();
  child.stderr?.resume();
  return child;
}

async function terminate(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

// A raw RESP PING over a socket: no client library, no reconnect logic to get in the way.
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = '';
    const finish = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('utf8');
      if (reply.includes('\r\n')) finish(reply.startsWith('+PONG'));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

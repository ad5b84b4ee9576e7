import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { DriverOp, DriverOps, DriverRequest, DriverResponse } from './driver-protocol.js';

/** The bench process's handle on the driver process (load clients and the provider). */
export interface Driver {
  call<K extends DriverOp>(op: K, params: DriverOps[K]['params']): Promise<DriverOps[K]['result']>;
  close(): Promise<void>;
}

/**
 * Forks the driver: load clients, WebSocket subscribers and the bench provider run in their own
 * process, so on a small machine the server's event loop is not also paying for its clients.
 */
export async function startDriver(): Promise<Driver> {
  const entry = fileURLToPath(new URL('./bench-driver.js', import.meta.url));
  // stdout of the bench is reserved for its one JSON line.
  const child: ChildProcess = fork(entry, [], { stdio: ['ignore', 2, 2, 'ipc'] });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.on('message', (message: DriverResponse) => {
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.ok) waiter.resolve(message.result);
    else waiter.reject(new Error(`driver: ${message.error}`));
  });
  child.once('exit', (code, signal) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`driver exited (${code ?? signal})`));
    pending.clear();
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', reject);
  });
  return {
    call<K extends DriverOp>(op: K, params: DriverOps[K]['params']): Promise<DriverOps[K]['result']> {
      const id = nextId++;
      const request: DriverRequest<K> = { id, op, params };
      return new Promise<DriverOps[K]['result']>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
        child.send(request);
      });
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        child.disconnect();
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}

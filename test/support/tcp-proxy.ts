import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/** A loopback TCP proxy to a Redis URL whose link a test can cut. */
export interface TcpProxy {
  /** The proxy's address, as a redis:// URL. */
  url: string;
  /**
   * Cut the link: open connections are reset; with `reset` new connections are accepted and reset at
   * once (a flapping link, until restore()), with `refuse` the port stops listening (ECONNREFUSED).
   */
  cut(mode?: 'reset' | 'refuse'): void;
  /** Let new connections through again (after a `reset` cut). */
  restore(): void;
  close(): Promise<void>;
}

/** Start a proxy to `target` (a redis:// URL) on a random loopback port. */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  const open = new Set<Socket>();
  let down = false;
  const server = createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = connect({ host: hostname, port: Number(port) });
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      open.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => (open.delete(a), b.destroy()));
      a.pipe(b);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut(mode = 'reset') {
      down = true;
      if (mode === 'refuse') server.close();
      for (const socket of open) socket.destroy();
    },
    restore() {
      down = false;
    },
    close() {
      for (const socket of open) socket.destroy();
      return new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
    },
  };
}

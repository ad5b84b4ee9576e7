import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a route answers: a status, a body (objects are sent as JSON, strings as-is) and an optional delay. */
export interface WebhookReply {
  status?: number;
  body?: unknown;
  delayMs?: number;
  headers?: Record<string, string>;
}

/** One request the server received. */
export interface ReceivedRequest {
  path: string;
  body: Record<string, unknown>;
  headers: IncomingHttpHeaders;
}

/** A real HTTP webhook host on 127.0.0.1 for tests. */
export interface WebhookServer {
  url(path: string): string;
  /** Every request received, in arrival order. */
  readonly requests: ReceivedRequest[];
  /** Requests received on one path. */
  on(path: string): ReceivedRequest[];
  close(): Promise<void>;
}

/** Start a webhook host whose routes answer by path; an unknown path answers 404. */
export async function startWebhookServer(
  routes: Record<string, WebhookReply | ((body: Record<string, unknown>) => WebhookReply)>,
): Promise<WebhookServer> {
  const requests: ReceivedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        body = {};
      }
      requests.push({ path, body, headers: req.headers });
      const route = routes[path];
      const reply: WebhookReply =
        route === undefined
          ? { status: 404, body: { error: 'no route' } }
          : typeof route === 'function'
            ? route(body)
            : route;
      const send = () => {
        if (res.destroyed) return;
        const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {});
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
        res.end(text);
      };
      if (reply.delayMs) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          send();
        }, reply.delayMs);
        timers.add(timer);
      } else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    requests,
    on: (path) => requests.filter((r) => r.path === path),
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

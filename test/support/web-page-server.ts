import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A route of the local page server: answers one request. */
export type PageHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** A node:http server on 127.0.0.1 serving the given routes (404 otherwise), recording every request path. */
export interface PageServer {
  readonly origin: string;
  readonly port: number;
  readonly requests: string[];
  url(path: string): string;
  close(): Promise<void>;
}

/** Start a page server for the web tool tests. */
export async function startPageServer(routes: Record<string, PageHandler>): Promise<PageServer> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    requests.push(path);
    const route = routes[path.split('?')[0] as string];
    if (route) route(req, res);
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    port,
    requests,
    url: (path) => `${origin}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A handler answering `body` with a content type and status. */
export function send(
  body: string | Buffer,
  contentType: string,
  status = 200,
  headers: Record<string, string> = {},
): PageHandler {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': contentType, ...headers });
    res.end(body);
  };
}

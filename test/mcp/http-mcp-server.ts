import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** A running Streamable HTTP MCP server on 127.0.0.1 with the echo fixture's `echo` and `get_secret` tools. */
export interface TestHttpMcpServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:12345/mcp. */
  readonly url: string;
  /** Protocol sessions currently open (a client's DELETE on disconnect ends one). */
  readonly openSessions: () => number;
  /** Headers of the last request (to check configured headers arrive). */
  readonly lastHeaders: () => IncomingMessage['headers'];
  close(): Promise<void>;
}

function buildServer(secret: string): McpServer {
  const server = new McpServer({ name: 'a3s-test-http-echo', version: '1.0.0' });
  server.registerTool(
    'echo',
    {
      description: 'Echo a message back.',
      inputSchema: { message: z.string().describe('The text to echo.') },
      annotations: { readOnlyHint: true },
    },
    async ({ message }) => ({ content: [{ type: 'text', text: message }] }),
  );
  server.registerTool('get_secret', { description: 'Return the secret the server was started with.' }, async () => ({
    content: [{ type: 'text', text: secret }],
  }));
  return server;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

/** Start a stateful Streamable HTTP MCP server (one SDK server per protocol session) on `port` (default: ephemeral). */
export async function startHttpMcpServer(secret: string, port = 0): Promise<TestHttpMcpServer> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let lastHeaders: IncomingMessage['headers'] = {};

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    lastHeaders = req.headers;
    if (!req.url?.startsWith('/mcp')) {
      res.writeHead(404).end();
      return;
    }
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (existing) {
      await existing.handleRequest(req, res, req.method === 'POST' ? await readJson(req) : undefined);
      return;
    }
    if (req.method !== 'POST' || sessionId !== undefined) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        transports.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) transports.delete(transport.sessionId);
    };
    await buildServer(secret).connect(transport);
    await transport.handleRequest(req, res, await readJson(req));
  };

  const http: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  const address = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}/mcp`,
    openSessions: () => transports.size,
    lastHeaders: () => lastHeaders,
    async close() {
      await Promise.all([...transports.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** Start a legacy HTTP+SSE MCP server (GET /sse opens the stream, POST /messages carries requests) on 127.0.0.1. */
export async function startSseMcpServer(secret: string): Promise<TestHttpMcpServer> {
  const transports = new Map<string, SSEServerTransport>();
  let lastHeaders: IncomingMessage['headers'] = {};
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    lastHeaders = req.headers;
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/sse') {
      // The SDK marks the SSE transport deprecated; it is what legacy servers speak.
      const transport = new SSEServerTransport('/messages', res);
      transports.set(transport.sessionId, transport);
      transport.onclose = () => transports.delete(transport.sessionId);
      await buildServer(secret).connect(transport);
      return;
    }
    const transport = transports.get(url.searchParams.get('sessionId') ?? '');
    if (req.method === 'POST' && url.pathname === '/messages' && transport) {
      await transport.handlePostMessage(req, res, await readJson(req));
      return;
    }
    res.writeHead(404).end();
  };
  const http: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const address = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}/sse`,
    openSessions: () => transports.size,
    lastHeaders: () => lastHeaders,
    async close() {
      await Promise.all([...transports.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

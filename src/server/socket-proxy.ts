import { WebSocket, type RawData } from 'ws';

/** Close code a proxied socket gets when the hop to the owner ends without a close of the owner's: reconnect. */
export const SERVICE_RESTART = 1012;

/** Messages a client may send while the hop to the owner opens; more is a policy violation. */
const MAX_QUEUED = 64;

/** Close codes an endpoint may send (RFC 6455 7.4): others (1005, 1006, 1015) are never put on the wire. */
function sendable(code: number): boolean {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
}

/** A client socket spliced to a socket on the session's owner. */
export interface ProxiedSocket {
  /** A message from the client, passed on (queued until the owner's socket is open). */
  fromClient(data: RawData, isBinary: boolean): void;
  /** The client answered a ping the owner sent: passed on, so the owner measures how far the client read. */
  pongFromClient(data: Buffer): void;
  /** The client's socket closed: close the owner's. */
  clientClosed(code: number): void;
}

/**
 * Splice `client` to a WebSocket at `url` (the owner node's same route) opened with `headers` (the client's
 * credentials and A3S-Forwarded): frames, pings and pongs pass both ways unchanged, so the owner's
 * subscription, confirmations, host registration and flow control see the client as if it had connected
 * there. The owner's close code reaches the client; a hop that fails or drops closes it with 1012
 * (service restart) so the client reconnects, through the balancer, to wherever the session is then.
 */
export function proxySocket(
  client: WebSocket,
  url: string,
  headers: Record<string, string>,
  maxPayload: number,
): ProxiedSocket {
  const upstream = new WebSocket(url, {
    headers,
    perMessageDeflate: false,
    maxPayload,
    autoPong: false,
    handshakeTimeout: 10_000,
  });
  const queued: [RawData, boolean][] = [];
  let clientGone = false;
  const closeClient = (code: number, reason: string) => {
    if (clientGone) return;
    clientGone = true;
    if (client.readyState === WebSocket.OPEN || client.readyState === WebSocket.CONNECTING)
      client.close(sendable(code) ? code : SERVICE_RESTART, reason.slice(0, 120));
  };
  upstream.on('open', () => {
    for (const [data, isBinary] of queued.splice(0)) upstream.send(data, { binary: isBinary });
  });
  upstream.on('message', (data, isBinary) => {
    if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
  });
  upstream.on('ping', (data) => {
    if (client.readyState === WebSocket.OPEN) client.ping(data);
  });
  upstream.on('close', (code, reason) =>
    closeClient(
      code === 1005 || code === 1006 ? SERVICE_RESTART : code,
      code === 1006 ? 'the session owner went away; reconnect' : reason.toString(),
    ),
  );
  upstream.on('unexpected-response', (_request, response) => {
    // The owner refused the upgrade (e.g. it no longer has the session): the client reconnects and is routed again.
    closeClient(SERVICE_RESTART, `the session owner answered ${response.statusCode}; reconnect`);
    upstream.terminate();
  });
  upstream.on('error', () => closeClient(SERVICE_RESTART, 'the session owner cannot be reached; reconnect'));
  return {
    fromClient(data, isBinary) {
      if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary: isBinary });
      else if (upstream.readyState === WebSocket.CONNECTING) {
        if (queued.length >= MAX_QUEUED)
          closeClient(1008, `more than ${MAX_QUEUED} messages before the subscription was attached`);
        else queued.push([data, isBinary]);
      }
    },
    pongFromClient(data) {
      if (upstream.readyState === WebSocket.OPEN) upstream.pong(data);
    },
    clientClosed(code) {
      clientGone = true;
      queued.length = 0;
      if (upstream.readyState === WebSocket.OPEN) upstream.close(sendable(code) ? code : 1000);
      else upstream.terminate();
    },
  };
}

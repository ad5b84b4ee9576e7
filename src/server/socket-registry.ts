import type { WebSocket } from 'ws';
import { WS_CLOSE } from '../protocol/ws-messages.js';

/** After a close frame, a peer that does not answer the closing handshake is cut off after this long. */
export const CLOSE_GRACE_MS = 1000;

// RFC 6455: a close frame's reason is at most 123 bytes of UTF-8.
const MAX_CLOSE_REASON_BYTES = 123;

function truncateReason(reason: string): string {
  if (Buffer.byteLength(reason) <= MAX_CLOSE_REASON_BYTES) return reason;
  let cut = reason.slice(0, MAX_CLOSE_REASON_BYTES);
  while (Buffer.byteLength(cut) > MAX_CLOSE_REASON_BYTES) cut = cut.slice(0, -1);
  return cut;
}

/** The close code that tells clients to reconnect (another node, or this one once it is back) and register again. */
export const SERVICE_RESTART_CLOSE = 1012;

/** Live WebSocket sockets, so shutdown can close them all with one code, and the one way a socket is closed. */
export class SocketRegistry {
  private readonly sockets = new Set<WebSocket>();
  private readonly closing = new WeakSet<WebSocket>();

  /** Track a socket until it closes. */
  add(socket: WebSocket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  /**
   * Close with a code (the first close wins), and cut the connection off if the peer does not complete
   * the closing handshake within CLOSE_GRACE_MS: a subscriber that stopped reading never will, and
   * shutdown must not wait for it.
   */
  close(socket: WebSocket, code: number, reason: string): void {
    if (socket.readyState === socket.CLOSED || this.closing.has(socket)) return;
    this.closing.add(socket);
    if (socket.readyState !== socket.CLOSING) socket.close(code, truncateReason(reason));
    const timer = setTimeout(() => socket.terminate(), CLOSE_GRACE_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  }

  /**
   * Close every socket with `code`: 1001 (going away, the default) or SERVICE_RESTART_CLOSE (1012), which tells
   * clients to reconnect and register their hooks, commands and budget host again (shutdown of a cluster
   * node, ownership moving). Clients of this server reconnect after either.
   */
  closeAll(reason: string, code: number = WS_CLOSE.goingAway): void {
    for (const socket of this.sockets) this.close(socket, code, reason);
  }

  /** Number of open sockets. */
  get size(): number {
    return this.sockets.size;
  }
}

import { A3sError, toA3sError } from './a3s-error.js';
import { seg, type HttpTransport } from './http-transport.js';
import type { HostReconnectOptions } from './host-reconnect.js';
import type { WebSocketConstructor, WebSocketSource } from './websocket-like.js';

/** What a Session's parts share: the transport, the session's id and how to open sockets. */
export interface SessionContext {
  readonly transport: HttpTransport;
  readonly sessionId: string;
  /** Where sockets come from: the constructor given, the global one, or the `ws` package imported on first use. */
  readonly WebSocket: WebSocketSource;
  /** How the host socket reconnects and re-registers (SessionHost). */
  readonly hostReconnect?: HostReconnectOptions;
}

/** `/v1/sessions/:id` plus a suffix. */
export function sessionPath(ctx: SessionContext, suffix = ''): string {
  return `/v1/sessions/${seg(ctx.sessionId)}${suffix}`;
}

/** The WebSocket constructor (importing `ws` when the environment has none), or a ValidationError naming the option. */
export async function requireWebSocket(ctx: SessionContext): Promise<WebSocketConstructor> {
  const WebSocket = await ctx.WebSocket.load();
  if (WebSocket === undefined)
    throw toA3sError(
      'VALIDATION_ERROR',
      'options.WebSocket: this environment has no global WebSocket and the "ws" package is not installed; install it, or pass a WebSocket class such as the one of the ws package',
      0,
      { field: 'WebSocket' },
    );
  return WebSocket;
}

/** Resolve to `false` when the call fails with one of these codes (the seed's boolean answers); rethrow anything else. */
export async function falseOn<T>(codes: readonly string[], call: () => Promise<T>): Promise<T | false> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof A3sError && codes.includes(error.code)) return false;
    throw error;
  }
}

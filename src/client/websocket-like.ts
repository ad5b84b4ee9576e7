/**
 * The part of the WHATWG WebSocket the client uses: browsers' global WebSocket and the `ws` package's
 * class both fit. Declared here because the client's TypeScript has no DOM library.
 */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: Handler<unknown> | null;
  onmessage: Handler<{ data: unknown }> | null;
  onclose: Handler<{ code: number; reason: string }> | null;
  onerror: Handler<unknown> | null;
}

// A method type checks its parameter bivariantly, so implementations whose event types are richer
// (the DOM's MessageEvent, ws's) still fit.
type Handler<E> = { handle(event: E): void }['handle'];

/** A WebSocket constructor (the global one, or `WebSocket` from the `ws` package). */
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/** The readyState of an open socket (the same in every implementation). */
export const WS_OPEN = 1;

/** The WebSocket constructor to use: the one given, else the global one; undefined when there is none. */
export function resolveWebSocket(given: WebSocketConstructor | undefined): WebSocketConstructor | undefined {
  return given ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
}

/**
 * Where the client's sockets come from: the constructor given, else the global one (browsers, Node 22+), else the
 * `ws` package (an optional peer dependency), imported on first use: on Node 20, which has no global WebSocket, a
 * client works without being handed one. The import's specifier is not a literal, so browser bundles leave it out.
 */
export class WebSocketSource {
  private imported: Promise<WebSocketConstructor | undefined> | undefined;

  constructor(private readonly given: WebSocketConstructor | undefined) {}

  /** The constructor known without an import (given or global), if any. */
  get ready(): WebSocketConstructor | undefined {
    return resolveWebSocket(this.given);
  }

  /** The constructor, importing `ws` when there is none; undefined when `ws` is not installed either. */
  load(): Promise<WebSocketConstructor | undefined> {
    const ready = this.ready;
    if (ready !== undefined) return Promise.resolve(ready);
    this.imported ??= importWs();
    return this.imported;
  }
}

async function importWs(): Promise<WebSocketConstructor | undefined> {
  const specifier = 'ws';
  try {
    const loaded = (await import(/* @vite-ignore */ specifier)) as {
      WebSocket?: WebSocketConstructor;
      default?: WebSocketConstructor;
    };
    return loaded.WebSocket ?? loaded.default;
  } catch {
    return undefined;
  }
}

/** Text of a message event's data (a string, or bytes from an implementation that hands them over). */
export function messageText(data: unknown): string {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return new TextDecoder().decode(data);
  if (ArrayBuffer.isView(data))
    return new TextDecoder().decode(new Uint8Array(data.buffer as ArrayBuffer, data.byteOffset, data.byteLength));
  if (Array.isArray(data)) return data.map((part) => messageText(part)).join('');
  return String(data);
}

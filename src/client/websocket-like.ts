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

/** Text of a message event's data (a string, or bytes from an implementation that hands them over). */
export function messageText(data: unknown): string {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return new TextDecoder().decode(data);
  if (ArrayBuffer.isView(data))
    return new TextDecoder().decode(new Uint8Array(data.buffer as ArrayBuffer, data.byteOffset, data.byteLength));
  if (Array.isArray(data)) return data.map((part) => messageText(part)).join('');
  return String(data);
}

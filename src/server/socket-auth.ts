import type { RawData } from 'ws';
import { CodeError } from '../errors.js';
import type { Caller } from '../runtime/ports/caller.js';
import type { Authenticator } from './authenticator.js';

/** How a WebSocket authenticates: the upgrade's Authorization header, or the token of a first `auth` frame. */
export type SocketCredentials = { readonly header: string | undefined } | { readonly token: string };

/** The caller a socket's credentials name, or why it is refused (the reason of its 4001 close). */
export type SocketAuthentication = { readonly caller: Caller } | { readonly refused: string };

/**
 * Authenticate a WebSocket by its header or first-frame token; an unknown or malformed credential is a
 * refusal carrying the authenticator's UNAUTHORIZED message (the socket is closed with it, not answered).
 */
export function authenticateSocket(authenticator: Authenticator, credentials: SocketCredentials): SocketAuthentication {
  try {
    return {
      caller:
        'token' in credentials
          ? authenticator.fromToken(credentials.token)
          : authenticator.fromHeader(credentials.header),
    };
  } catch (error) {
    return { refused: error instanceof CodeError ? error.message : 'unauthorized' };
  }
}

/** A client frame's JSON value, or undefined when the frame is not JSON (JSON itself never yields undefined). */
export function parseJsonFrame(data: RawData): { readonly value: unknown } | undefined {
  try {
    return { value: JSON.parse(data.toString()) as unknown };
  } catch {
    return undefined;
  }
}

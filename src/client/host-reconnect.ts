import type { A3sError } from './a3s-error.js';
import type { ReconnectOptions } from './socket-event-stream.js';

/** What a host socket's reconnect did: re-registered under a new connection id, or failed (`final`: it gave up). */
export interface HostReconnectInfo {
  /** Close code and reason of the socket that went away (or of the failed attempt). */
  code: number;
  reason: string;
  /** Attempts since the socket went away (1 for the first). */
  attempt: number;
  /** The new connection id, once every hook, command and the budget guard are registered on it. */
  connectionId?: string;
  /** Why this attempt failed. */
  error?: A3sError;
  /** True when no more attempts follow: the server fails closed for the registrations until you register again. */
  final: boolean;
}

/** How the session's host socket reconnects (the backoff of event streams) and who hears about it. */
export interface HostReconnectOptions extends ReconnectOptions {
  /** Called after each re-registration and each failed attempt. */
  onReconnect?: (info: HostReconnectInfo) => void;
}

/** Close codes after which reconnecting the host socket cannot help (4001, 4003, 4004, 4010, 1008). */
const FATAL_CLOSE_CODES = new Set([4001, 4003, 4004, 4010, 1008]);

/** Error codes of an attempt that no retry can fix. */
const FATAL_ERROR_CODES = new Set([
  'UNAUTHORIZED',
  'FORBIDDEN',
  'SESSION_NOT_FOUND',
  'SESSION_CLOSED',
  'NODE_LOST',
  'VALIDATION_ERROR',
  'NOT_FOUND',
]);

/** True when a host socket that closed with `code`, or an attempt that failed with `error`, must not be retried. */
export function hostReconnectIsFatal(code: number, error?: A3sError): boolean {
  if (FATAL_CLOSE_CODES.has(code)) return true;
  return error !== undefined && FATAL_ERROR_CODES.has(error.code);
}

/** The delay before attempt `attempt` (1-based): initialDelayMs doubled per attempt, at most maxDelayMs. */
export function hostReconnectDelay(options: ReconnectOptions | undefined, attempt: number): number {
  return Math.min(options?.maxDelayMs ?? 5000, (options?.initialDelayMs ?? 100) * 2 ** (attempt - 1));
}

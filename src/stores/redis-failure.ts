import { CodeError } from '../errors.js';

/**
 * Map a Redis client failure to CodeError('PERSISTENCE_FAILED') with `message` plus a short cause
 * (an errno such as ECONNREFUSED, an ioredis error name, or a Redis reply code such as OOM); never the
 * server's full text. A CodeError passes through unchanged.
 */
export function redisFailure(message: string, details: Record<string, unknown>, cause: unknown): CodeError {
  if (cause instanceof CodeError) return cause;
  const reason = describeRedisError(cause);
  return new CodeError('PERSISTENCE_FAILED', `${message} (redis: ${reason})`, { ...details, cause: reason });
}

function describeRedisError(error: unknown): string {
  if (typeof error !== 'object' || error === null) return 'unknown error';
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) return code;
  const name = error instanceof Error ? error.name : '';
  const message = error instanceof Error ? error.message : '';
  // ioredis replies carry the server's error code as the first word ("OOM command not allowed ...").
  if (name === 'ReplyError') return /^[A-Z]+/.exec(message)?.[0] ?? 'reply error';
  if (name === 'MaxRetriesPerRequestError') return 'connection lost, retries exhausted';
  if (/Connection is closed/i.test(message)) return 'connection closed';
  if (/enableOfflineQueue/i.test(message)) return 'not connected';
  return name !== '' && name !== 'Error' ? name : 'connection error';
}

import { CodeError } from '../errors.js';

/** The errno code (e.g. "ENOENT") of a Node.js system error, or undefined for anything else. */
export function errorCode(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** Rethrow `error` unless it says the file was already gone (ENOENT); for `.catch()` after an unlink. */
export function ignoreMissing(error: unknown): void {
  if (errorCode(error) !== 'ENOENT') throw error;
}

/**
 * Map a file system failure to CodeError('PERSISTENCE_FAILED') with `message` plus the errno code and
 * `details` (the ids involved); never a path from the OS message, never a stack. A CodeError passes
 * through unchanged.
 */
export function persistenceError(message: string, details: Record<string, unknown>, cause: unknown): CodeError {
  if (cause instanceof CodeError) return cause;
  const code = errorCode(cause);
  return new CodeError('PERSISTENCE_FAILED', code === undefined ? message : `${message} (${code})`, {
    ...details,
    ...(code === undefined ? {} : { cause: code }),
  });
}

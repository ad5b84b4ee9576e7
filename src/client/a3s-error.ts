import { ERROR_CATALOGUE, RUN_ERROR_CATALOGUE, type ErrorCode, type RunErrorCode } from '../errors.js';

/**
 * Codes the client itself fails with, beside the server's catalogue: NETWORK_ERROR (fetch failed, or an
 * event stream could not reconnect within its attempts), PROTOCOL_ERROR (the server answered something
 * that is not our wire shape), TOOL_ERROR (a string-answering tool helper got a failed result).
 */
export const CLIENT_ERROR_CATALOGUE = {
  NETWORK_ERROR: 'The server could not be reached (fetch failed, or an event stream gave up reconnecting).',
  PROTOCOL_ERROR: 'The server answered with something that is not the documented wire shape.',
  TOOL_ERROR:
    "A helper that answers the tool's output (readFile, grep, bash, glob) got a failed result (exitCode not 0); details.result is the full ToolResult (the seed's CodeError::Tool code).",
} as const;

/** A code the client itself fails with. */
export type ClientErrorCode = keyof typeof CLIENT_ERROR_CATALOGUE;

/** Every code an A3sError may carry: the HTTP catalogue, the run catalogue and the client's own. */
export type A3sErrorCode = ErrorCode | RunErrorCode | ClientErrorCode;

/** Every failure of the client: the server's `{error: {code, message, details}}` (or a run's error), typed. */
export class A3sError extends Error {
  readonly code: string;
  /** HTTP status of the answer (0 when there was none: network errors, run errors, stream close codes). */
  readonly status: number;
  readonly details: Record<string, unknown>;

  constructor(code: string, message: string, status = 0, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'A3sError';
    this.code = code;
    this.status = status;
    this.details = details;
  }
}

/** The class of the error for one code: an A3sError subclass whose instances carry that code. */
export type A3sErrorClass<C extends string = string> = (new (
  message: string,
  status?: number,
  details?: Record<string, unknown>,
) => A3sError & { readonly code: C }) & { readonly code: C };

/** SESSION_BUSY -> SessionBusyError. */
export function errorClassName(code: string): string {
  const words = code
    .toLowerCase()
    .split('_')
    .filter((w) => w.length > 0);
  const base = words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
  return base.endsWith('Error') ? base : `${base}Error`;
}

function defineErrorClass<C extends string>(code: C): A3sErrorClass<C> {
  const name = errorClassName(code);
  const defaultStatus = code in ERROR_CATALOGUE ? ERROR_CATALOGUE[code as ErrorCode].status : 0;
  const cls = class extends A3sError {
    static readonly code: C = code;
    declare readonly code: C;
    constructor(message: string, status = defaultStatus, details: Record<string, unknown> = {}) {
      super(code, message, status, details);
      this.name = name;
    }
  };
  Object.defineProperty(cls, 'name', { value: name });
  return cls as unknown as A3sErrorClass<C>;
}

type ClassTable = { [C in A3sErrorCode]: A3sErrorClass<C> };

/** One class per code of the catalogues (HTTP, run, client), generated from them. */
export const ERROR_CLASSES: ClassTable = Object.fromEntries(
  [
    ...new Set<string>([
      ...Object.keys(ERROR_CATALOGUE),
      ...Object.keys(RUN_ERROR_CATALOGUE),
      ...Object.keys(CLIENT_ERROR_CATALOGUE),
    ]),
  ].map((code) => [code, defineErrorClass(code)]),
) as ClassTable;

/** The class for a code (A3sError itself for a code no catalogue has, e.g. from a newer server). */
export function errorClassFor<C extends A3sErrorCode>(code: C): A3sErrorClass<C>;
export function errorClassFor(code: string): A3sErrorClass | typeof A3sError;
export function errorClassFor(code: string): A3sErrorClass | typeof A3sError {
  return Object.prototype.hasOwnProperty.call(ERROR_CLASSES, code) ? ERROR_CLASSES[code as A3sErrorCode] : A3sError;
}

/** Build the typed error for a code, message, status and details. */
export function toA3sError(
  code: string,
  message: string,
  status: number,
  details: Record<string, unknown> = {},
): A3sError {
  const cls = errorClassFor(code);
  return cls === A3sError
    ? new A3sError(code, message, status, details)
    : new (cls as A3sErrorClass)(message, status, details);
}

/** True when a value is an A3sError (any code). */
export function isA3sError(value: unknown): value is A3sError {
  return value instanceof A3sError;
}

import { A3sError, toA3sError } from './a3s-error.js';

/** How the client reaches the server. */
export interface TransportOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:8080` (a path prefix is kept). */
  baseUrl: string;
  /** Bearer token; omit it for an anonymous loopback server. */
  token?: string;
  /** fetch implementation (default: the global fetch). */
  fetch?: typeof fetch;
  /** 'no-forward': ask cluster nodes not to forward, and follow their 421 to the owner once (see A3sClientOptions.route). */
  route?: RouteOption;
}

/** Whether a cluster node may forward the client's requests to the session's owner (default) or answers 421. */
export type RouteOption = 'forward' | 'no-forward';

/** The owner URL of a 421 SESSION_OWNED_ELSEWHERE answer, when it is an http(s) URL to follow (undefined otherwise). */
export function ownerUrlToFollow(error: A3sError): string | undefined {
  if (error.code !== 'SESSION_OWNED_ELSEWHERE') return undefined;
  const owner = error.details.ownerUrl;
  if (typeof owner !== 'string') return undefined;
  try {
    const url = new URL(owner);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** One request. */
export interface RequestOptions {
  body?: unknown;
  /** A raw (non-JSON) body and its content type, e.g. the bytes of an attachment upload; `body` is then unused. */
  raw?: { bytes: Uint8Array; contentType: string };
  /** Query parameters; undefined values are left out. */
  query?: Record<string, string | number | boolean | undefined>;
  /** Extra headers (e.g. Idempotency-Key). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** The answer of a request: its status and parsed JSON body. */
export interface TransportResponse<T> {
  status: number;
  body: T;
}

/** A path segment, encoded (ids are opaque strings). */
export function seg(value: string): string {
  return encodeURIComponent(value);
}

/**
 * JSON over HTTP with the bearer token. A non-2xx answer rejects with the A3sError subclass of its
 * `{error: {code, message, details}}` body; a network failure with NetworkError.
 */
export class HttpTransport {
  readonly baseUrl: string;
  readonly token: string | undefined;
  readonly route: RouteOption;
  private readonly fetchImpl: typeof fetch;
  // Route 'no-forward': the owner origin of each session whose last request was followed from a 421.
  private readonly owners = new Map<string, string>();

  constructor(options: TransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.token = options.token;
    if (options.route !== undefined && options.route !== 'forward' && options.route !== 'no-forward') {
      throw toA3sError(
        'VALIDATION_ERROR',
        `options.route: must be "forward" or "no-forward", got ${JSON.stringify(options.route)}`,
        0,
        { field: 'route' },
      );
    }
    this.route = options.route ?? 'forward';
    // The global fetch bound to globalThis: a browser's fetch called as a method of another object throws
    // "Illegal invocation".
    const impl =
      options.fetch ?? (typeof globalThis.fetch === 'function' ? globalThis.fetch.bind(globalThis) : undefined);
    if (typeof impl !== 'function')
      throw toA3sError('VALIDATION_ERROR', 'options.fetch: no global fetch in this environment; pass one', 0, {
        field: 'fetch',
      });
    this.fetchImpl = impl;
  }

  /** The full URL of a path with a query. */
  url(path: string, query?: RequestOptions['query']): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined) params.set(key, String(value));
    const text = params.toString();
    return `${this.baseUrl}${path}${text ? `?${text}` : ''}`;
  }

  /**
   * Send a request and parse the JSON answer; non-2xx rejects with the typed error. With route 'no-forward', a
   * 421 SESSION_OWNED_ELSEWHERE naming an http(s) owner URL is sent once more there (same headers and token);
   * what the owner answers is the answer (never a second hop).
   */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<TransportResponse<T>> {
    if (this.route === 'forward') return this.send<T>(this.baseUrl, method, path, options);
    const sessionId = /^\/v1\/sessions\/([^/?]+)/.exec(path)?.[1];
    try {
      const answer = await this.send<T>(this.baseUrl, method, path, options);
      if (sessionId !== undefined) this.owners.delete(decodeURIComponent(sessionId));
      return answer;
    } catch (error) {
      const owner = error instanceof A3sError ? ownerUrlToFollow(error) : undefined;
      if (owner === undefined) throw error;
      const named = (error as A3sError).details.sessionId;
      if (typeof named === 'string') this.owners.set(named, owner);
      return this.send<T>(owner, method, path, options);
    }
  }

  /** Route 'no-forward': the owner origin the last followed 421 named for a session (undefined when the base URL served it). */
  ownerOf(sessionId: string): string | undefined {
    return this.owners.get(sessionId);
  }

  private async send<T>(
    base: string,
    method: string,
    path: string,
    options: RequestOptions,
  ): Promise<TransportResponse<T>> {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    if (this.route === 'no-forward') headers['a3s-route'] = 'no-forward';
    let body: string | Uint8Array | undefined;
    if (options.raw !== undefined) {
      headers['content-type'] = options.raw.contentType;
      body = options.raw.bytes;
    } else if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    // The path and query, at this base URL (the server's, or the owner's a 421 named).
    const target = `${base}${this.url(path, options.query).slice(this.baseUrl.length)}`;
    let response: Response;
    try {
      response = await this.fetchImpl(target, {
        method,
        headers,
        // A Uint8Array<ArrayBufferLike> is a BufferSource at run time; the DOM types want ArrayBuffer only.
        body: body as NonNullable<RequestInit['body']> | undefined,
        signal: options.signal,
      });
    } catch (error) {
      if (error instanceof Error && error.name === 'AbortError') throw error;
      // fetch's own message is "fetch failed": the cause (ECONNREFUSED, ENOTFOUND, ...) says why.
      const cause = error instanceof Error ? (error as { cause?: unknown }).cause : undefined;
      const code =
        typeof cause === 'object' && cause !== null && typeof (cause as { code?: unknown }).code === 'string'
          ? (cause as { code: string }).code
          : undefined;
      const why =
        code ?? (cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error));
      throw toA3sError('NETWORK_ERROR', `${method} ${target}: the server could not be reached (${why})`, 0, {
        method,
        path,
        ...(code !== undefined ? { cause: code } : {}),
      });
    }
    const text = await response.text();
    let parsed: unknown = undefined;
    if (text.length > 0) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    if (!response.ok) throw errorFromAnswer(response.status, parsed, `${method} ${path}`);
    if (parsed === undefined)
      throw toA3sError(
        'PROTOCOL_ERROR',
        `${method} ${path}: the answer (${response.status}) is not JSON`,
        response.status,
      );
    return { status: response.status, body: parsed as T };
  }

  /** GET and answer the body. */
  async get<T>(path: string, query?: RequestOptions['query']): Promise<T> {
    return (await this.request<T>('GET', path, { query })).body;
  }

  /** POST and answer the body. */
  async post<T>(path: string, body?: unknown, options: Omit<RequestOptions, 'body'> = {}): Promise<T> {
    return (await this.request<T>('POST', path, { ...options, body: body ?? {} })).body;
  }

  /** PUT and answer the body. */
  async put<T>(path: string, body: unknown): Promise<T> {
    return (await this.request<T>('PUT', path, { body })).body;
  }

  /** PATCH and answer the body. */
  async patch<T>(path: string, body: unknown): Promise<T> {
    return (await this.request<T>('PATCH', path, { body })).body;
  }

  /** DELETE and answer the body. */
  async delete<T>(path: string, query?: RequestOptions['query']): Promise<T> {
    return (await this.request<T>('DELETE', path, { query })).body;
  }
}

/** The typed error of a non-2xx answer (our error shape; anything else is a PROTOCOL_ERROR naming the status). */
export function errorFromAnswer(status: number, body: unknown, what: string): A3sError {
  const error = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)?.error;
  if (error && typeof error.code === 'string' && typeof error.message === 'string') {
    const details =
      typeof error.details === 'object' && error.details !== null ? (error.details as Record<string, unknown>) : {};
    return toA3sError(error.code, error.message, status, details);
  }
  return toA3sError('PROTOCOL_ERROR', `${what}: HTTP ${status} without an error body`, status);
}

import { Agent, request, type Dispatcher } from 'undici';

/** A fetch function as the openai SDK takes it (its `fetch` client option). */
export type SdkFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** A fetch for the openai SDK on one undici connection pool, and the pool's close. */
export interface UndiciFetch {
  fetch: SdkFetch;
  /** Closes the pool's connections; a request still in flight fails (shutdown has drained runs by then). */
  close(): Promise<void>;
}

/** Idle keep-alive connections to a provider are closed after this long. */
const KEEP_ALIVE_MS = 30_000;

/**
 * A fetch over undici's `request` API for the openai SDK. The SDK reads only status, headers, url and
 * the body of a response, and iterates a streamed body with `for await` when it is async iterable, so a
 * Node stream serves it as well as a web ReadableStream; that skips the WHATWG fetch and web-stream
 * layers, which cost more CPU per provider call than everything else the SDK does. Redirects are not
 * followed (chat-completions endpoints do not redirect); request bodies are strings or bytes, which is
 * all the SDK sends for JSON calls.
 */
export function createUndiciFetch(): UndiciFetch {
  // No headers timeout of undici's own: the SDK's request timeout (the provider's timeoutMs) bounds the wait
  // for a response. A stream that then stays silent for undici's body timeout (5 minutes) fails, retryably.
  const dispatcher = new Agent({ keepAliveTimeout: KEEP_ALIVE_MS, headersTimeout: 0 });
  const fetch: SdkFetch = async (input, init = {}) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const response = await request(url, {
      dispatcher,
      method: (init.method ?? 'GET').toUpperCase() as Dispatcher.HttpMethod,
      headers: headerRecord(init.headers),
      body: requestBody(init.body),
      signal: init.signal ?? undefined,
    });
    return new UndiciResponse(url, response) as unknown as Response;
  };
  return {
    fetch,
    close: () => dispatcher.destroy(),
  };
}

/** The response members the openai SDK reads, over an undici response. */
class UndiciResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText = '';
  readonly redirected = false;
  readonly type = 'basic';
  readonly headers: Headers;
  readonly body: Dispatcher.ResponseData['body'];

  constructor(
    readonly url: string,
    response: Dispatcher.ResponseData,
  ) {
    this.status = response.statusCode;
    this.ok = response.statusCode >= 200 && response.statusCode < 300;
    this.headers = responseHeaders(response.headers);
    this.body = response.body;
  }

  get bodyUsed(): boolean {
    return this.body.bodyUsed;
  }

  text(): Promise<string> {
    return this.body.text();
  }

  json(): Promise<unknown> {
    return this.body.json();
  }

  arrayBuffer(): Promise<ArrayBuffer> {
    return this.body.arrayBuffer();
  }
}

function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  const record: Record<string, string> = {};
  if (headers === undefined) return record;
  if (headers instanceof Headers) {
    headers.forEach((value, name) => {
      record[name] = value;
    });
    return record;
  }
  const pairs = Array.isArray(headers) ? headers : Object.entries(headers);
  for (const [name, value] of pairs) {
    if (name !== undefined && value !== undefined)
      record[name.toLowerCase()] = typeof value === 'string' ? value : value.join(', ');
  }
  return record;
}

function requestBody(body: RequestInit['body']): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError('undici fetch: only string and byte request bodies are supported');
}

function responseHeaders(raw: Dispatcher.ResponseData['headers']): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.append(name, value);
  }
  return headers;
}

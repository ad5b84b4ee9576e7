import type { IncomingHttpHeaders } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Agent, request as undiciRequest, type Dispatcher } from 'undici';
import { FORWARDED_HEADER, type ForwardedHeaders, type ForwardedHop } from '../cluster/forwarded-header.js';
import type { PeerUrls } from '../cluster/peer-urls.js';
import { CodeError } from '../errors.js';
import { recordForwardedClient } from './client-address.js';

/** The header a client sends to get 421 SESSION_OWNED_ELSEWHERE instead of a forwarded request. */
export const ROUTE_HEADER = 'a3s-route';

/**
 * Headers that describe one connection, never copied across a hop (RFC 9110 7.6.1), and ours, set anew.
 * `Host` goes along: the owner checks it (allowed hosts) and a browser's Origin against it, as the first node did.
 */
const HOP_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  FORWARDED_HEADER,
  ROUTE_HEADER,
]);

/** A forwarded request's response headers that are the hop's, not the owner's answer. */
const HOP_RESPONSE_HEADERS = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'trailer',
  'upgrade',
  'proxy-authenticate',
]);

/**
 * How often a forward in flight checks that its owner still heartbeats. The hop sets no deadline of its own
 * (a waited run or an event stream may take as long as the owner takes); an owner that stops heartbeating
 * (dead, partitioned, or hung) ends the forward: OWNER_UNREACHABLE before its answer started, the end of the
 * response after (an event stream resumes elsewhere with Last-Event-ID).
 */
export const OWNER_WATCH_MS = 2_000;

/** Idle keep-alive connections to peers close after this long. */
const KEEP_ALIVE_MS = 30_000;

/** The headers the owner gets: the client's (its credentials included) minus the hop's, as undici takes them. */
export function forwardedRequestHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_HEADERS.has(name) || name.startsWith('sec-websocket-')) continue;
    out[name] = value;
  }
  return out;
}

/** What the forwarder is built from. */
export interface RequestForwarderOptions {
  readonly peers: PeerUrls;
  /** Absent without a cluster secret: then nothing is forwarded (or accepted as forwarded). */
  readonly headers: ForwardedHeaders | undefined;
  /** True while the node heartbeats (its advertisement has not expired); absent on one node. */
  readonly ownerAlive?: (nodeId: string) => Promise<boolean>;
  /** How often a forward in flight checks its owner (default OWNER_WATCH_MS). */
  readonly watchMs?: number;
}

/**
 * Forwards a request for a session another node owns to that node and streams its answer back, so a
 * client behind any balancer never sees the hop. The owner authenticates the client's own credentials
 * again; `A3S-Forwarded` (signed with the cluster secret) tells it the request was forwarded once and must
 * not be forwarded again. Only owners whose advertised URL matches `cluster.peer_urls` are forwarded to.
 */
export class RequestForwarder {
  private readonly hops = new WeakMap<FastifyRequest, ForwardedHop>();
  /** Aborts of the forwards in flight (streams included), for shutdown. */
  private readonly active = new Set<AbortController>();
  /** The last liveness answer per owner node, shared by every forward to it. */
  private readonly liveness = new Map<string, { atMs: number; answer: Promise<boolean> }>();
  private readonly dispatcher: Dispatcher = new Agent({
    keepAliveTimeout: KEEP_ALIVE_MS,
    headersTimeout: 0,
    bodyTimeout: 0,
  });

  constructor(private readonly options: RequestForwarderOptions) {}

  /**
   * Check an incoming A3S-Forwarded (every request, before authentication): a valid one is remembered for
   * the request (and its signed client address, for limits and logs); anything else is FORWARDED_INVALID.
   * A request without the header is not forwarded.
   */
  checkIncoming(request: FastifyRequest): ForwardedHop | undefined {
    const value = request.headers[FORWARDED_HEADER];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !this.options.headers)
      throw new CodeError('FORWARDED_INVALID', `${FORWARDED_HEADER}: this node accepts no forwarded requests`, {
        reason: 'malformed',
      });
    const result = this.options.headers.verify(value, request.method, request.url);
    if (!result.ok)
      throw new CodeError('FORWARDED_INVALID', `${FORWARDED_HEADER}: refused (${result.reason})`, {
        reason: result.reason,
      });
    this.hops.set(request, result.hop);
    recordForwardedClient(request, result.hop.clientAddress);
    return result.hop;
  }

  /** The hop a request arrived through, when another node forwarded it. */
  hopOf(request: FastifyRequest): ForwardedHop | undefined {
    return this.hops.get(request);
  }

  /**
   * Where to forward a request that met SESSION_OWNED_ELSEWHERE: the owner's origin, or undefined when the
   * error must stand (the client asked for no forwarding, or this node has no peers or no secret). A
   * request already forwarded once, or an owner outside peer_urls, is OWNER_UNREACHABLE.
   */
  targetFor(request: FastifyRequest, error: CodeError): string | undefined {
    if (request.headers[ROUTE_HEADER] === 'no-forward' || !this.options.headers || this.options.peers.empty)
      return undefined;
    const ownerUrl = typeof error.details.ownerUrl === 'string' ? error.details.ownerUrl : undefined;
    if (this.hops.has(request)) throw unreachable(error, 'the session moved while the request was forwarded');
    if (ownerUrl === undefined) throw unreachable(error, 'its owner stopped heartbeating; its lease expires shortly');
    const origin = this.options.peers.allowed(ownerUrl);
    if (origin === undefined)
      throw unreachable(error, `its owner advertises ${ownerUrl}, which matches none of cluster.peer_urls`);
    return origin;
  }

  /** The A3S-Forwarded value for a request sent on to `url` (path and query) with `method`. */
  sign(method: string, url: string, clientAddress: string): string {
    if (!this.options.headers) throw new Error('no cluster secret: nothing is forwarded');
    return this.options.headers.sign(method, url, clientAddress);
  }

  /**
   * Send the request to `origin` with `body` (the parsed body, sent again as JSON; a Buffer, an upload's raw
   * bytes, is sent as it came with its own content-type; undefined for none) and
   * stream the owner's answer back through the hijacked reply. Before the owner answers, failures are
   * OWNER_UNREACHABLE (an ordinary error answer); once the answer streams, a failure ends the response.
   */
  async forward(
    request: FastifyRequest,
    reply: FastifyReply,
    origin: string,
    error: CodeError,
    body: unknown,
  ): Promise<void> {
    const headers = forwardedRequestHeaders(request.headers);
    headers[FORWARDED_HEADER] = this.sign(request.method, request.url, request.ip);
    let payload: string | Buffer | undefined;
    if (Buffer.isBuffer(body) && request.method !== 'GET' && request.method !== 'HEAD') payload = body;
    else if (body !== undefined && request.method !== 'GET' && request.method !== 'HEAD') {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      if (typeof body !== 'string') headers['content-type'] = 'application/json';
    }
    const abort = new AbortController();
    const onClose = () => abort.abort();
    reply.raw.once('close', onClose);
    this.active.add(abort);
    const watch = this.watchOwner(String(error.details.ownerNodeId), abort);
    const done = () => {
      clearInterval(watch);
      reply.raw.off('close', onClose);
      this.active.delete(abort);
    };
    let answer: Dispatcher.ResponseData;
    try {
      answer = await undiciRequest(`${origin}${request.url}`, {
        method: request.method as Dispatcher.HttpMethod,
        headers,
        body: payload,
        dispatcher: this.dispatcher,
        signal: abort.signal,
      });
    } catch (cause) {
      done();
      const why =
        abort.signal.reason instanceof OwnerGone
          ? 'it stopped heartbeating before it answered'
          : `it did not answer (${(cause as Error).message})`;
      throw unreachable(error, why);
    }
    // The owner itself could not serve it (the session moved on meanwhile): the client retries shortly.
    if (answer.statusCode === 421) {
      answer.body.destroy();
      done();
      throw unreachable(error, 'the session moved while the request was forwarded');
    }
    reply.hijack();
    const out: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(answer.headers))
      if (value !== undefined && !HOP_RESPONSE_HEADERS.has(name)) out[name] = value;
    reply.raw.writeHead(answer.statusCode, out);
    // Server-sent events and long waits stream as they come.
    reply.raw.flushHeaders();
    try {
      await pipeline(answer.body, reply.raw, { signal: abort.signal });
    } catch {
      // The client left (its close aborted the hop) or the owner died mid-answer: the response ends here.
      answer.body.destroy();
      reply.raw.destroy();
    } finally {
      done();
    }
  }

  /** Abort `abort` with OwnerGone once `nodeId` stops heartbeating (checked every watchMs; nothing on one node). */
  private watchOwner(nodeId: string, abort: AbortController): NodeJS.Timeout | undefined {
    if (!this.options.ownerAlive) return undefined;
    let checking = false;
    const timer = setInterval(() => {
      if (checking) return;
      checking = true;
      this.ownerAlive(nodeId).then(
        (yes) => {
          checking = false;
          if (!yes) abort.abort(new OwnerGone(nodeId));
        },
        // Redis unreachable: this node cannot tell, and the hop goes on (its own requests fail meanwhile).
        () => (checking = false),
      );
    }, this.options.watchMs ?? OWNER_WATCH_MS);
    timer.unref();
    return timer;
  }

  /**
   * Whether `nodeId` still heartbeats, asked at most once per watch interval for all the forwards to it (a
   * thousand forwarded event streams to one owner cost one Redis read per interval, not a thousand).
   */
  private ownerAlive(nodeId: string): Promise<boolean> {
    const now = Date.now();
    const cached = this.liveness.get(nodeId);
    if (cached && now - cached.atMs < (this.options.watchMs ?? OWNER_WATCH_MS) / 2) return cached.answer;
    const answer = (this.options.ownerAlive as (id: string) => Promise<boolean>)(nodeId);
    // Node ids change with restarts: a long-lived node forgets old answers rather than keep them all.
    if (this.liveness.size >= 256) this.liveness.clear();
    this.liveness.set(nodeId, { atMs: now, answer });
    // A failed read is not remembered: the next check asks again.
    answer.catch(() => this.liveness.get(nodeId)?.answer === answer && this.liveness.delete(nodeId));
    return answer;
  }

  /** End every forward in flight (shutdown: a forwarded event stream resumes elsewhere with Last-Event-ID). */
  closeAll(): void {
    for (const abort of [...this.active]) abort.abort();
  }

  /** Drop the connections to peers (shutdown: what they carried was drained or ends with this node). */
  async close(): Promise<void> {
    await this.dispatcher.destroy();
  }
}

/** Why a forward was aborted: its owner's advertisement expired. */
class OwnerGone extends Error {
  constructor(nodeId: string) {
    super(`node ${nodeId} stopped heartbeating`);
  }
}

/** OWNER_UNREACHABLE (502, Retry-After 1) for a session whose owner could not take the request. */
function unreachable(error: CodeError, why: string): CodeError {
  const sessionId = error.details.sessionId;
  return new CodeError(
    'OWNER_UNREACHABLE',
    `session ${String(sessionId)} is owned by node ${String(error.details.ownerNodeId)}, which cannot take the request: ${why}; retry shortly`,
    { sessionId, ownerNodeId: error.details.ownerNodeId, retryAfterSeconds: 1 },
  );
}

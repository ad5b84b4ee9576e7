import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CodeConfig } from '../config/code-config.js';
import { CodeError } from '../errors.js';
import { clientAddressOf, isLoopbackAddress, plainAddress, TrustedProxies } from './client-address.js';
import type { ClientFaultLog } from './client-fault-log.js';
import { rawErrorResponse } from './error-handler.js';

/** The limits the guard enforces. */
export type ConnectionLimits = Pick<CodeConfig['limits'], 'bodyTimeoutMs' | 'maxConnectionsPerAddress'>;

interface SocketState {
  /** The client address this socket counts for (undefined: not counted, e.g. loopback). */
  client: string | undefined;
}

/**
 * Bounds what one client can hold open. At most limits.maxConnectionsPerAddress connections per client
 * address (loopback exempt): a direct peer over the cap is destroyed when it connects (no answer: it has
 * sent no request yet, and keeping it to answer would spend the descriptor the cap protects); behind a
 * trusted proxy (trust_proxy) the client is X-Forwarded-For's address, counted per proxied connection from
 * its request on, and a request over the cap is answered 429 TOO_MANY_CONNECTIONS and its connection closed.
 * A request body that has not arrived limits.bodyTimeoutMs after its headers is answered 408 REQUEST_TIMEOUT
 * and its connection closed (headers, and connections that send nothing, are Node's headersTimeout's).
 */
export class ConnectionGuard {
  private readonly counts = new Map<string, number>();
  private readonly sockets = new WeakMap<Socket, SocketState>();

  constructor(
    private readonly limits: ConnectionLimits,
    private readonly proxies: TrustedProxies,
    private readonly faults: ClientFaultLog,
  ) {}

  /** Open connections counted for a client address (for tests and metrics). */
  openConnections(address: string): number {
    return this.counts.get(plainAddress(address)) ?? 0;
  }

  /** Watch the server's new connections (before Node's HTTP parser reads them). */
  attach(server: Server): void {
    server.on('connection', (socket: Socket) => this.onConnection(socket));
  }

  /** Install the onRequest hook: attribute proxied connections, start the body timer. */
  install(app: FastifyInstance): void {
    this.attach(app.server);
    // Callback hooks, not async ones: no promise per request on the hot path.
    app.addHook('onRequest', (request, reply, done) => {
      try {
        this.onRequest(request, reply);
      } catch (error) {
        done(error as Error);
        return;
      }
      done();
    });
    app.addHook('onRequestAbort', (request, done) => {
      this.faults.log(
        'http:aborted',
        'info',
        { reqId: request.id, ip: clientAddressOf(request), method: request.method, path: request.url.split('?')[0] },
        'client closed the connection before the answer',
      );
      done();
    });
  }

  private onConnection(socket: Socket): void {
    const peer = plainAddress(socket.remoteAddress);
    const state: SocketState = { client: undefined };
    this.sockets.set(socket, state);
    socket.once('close', () => this.release(state));
    if (!this.proxies.trusts(peer) && !isLoopbackAddress(peer)) {
      if (!this.take(state, peer)) {
        this.faults.log(
          'http:connection-cap',
          'warn',
          { ip: peer, limit: this.limits.maxConnectionsPerAddress },
          `refused a connection: ${peer} already has limits.maxConnectionsPerAddress (${this.limits.maxConnectionsPerAddress}) open`,
        );
        socket.destroy();
      }
    }
  }

  /** Count the socket for `client`; false when the client is at the cap. */
  private take(state: SocketState, client: string): boolean {
    const open = this.counts.get(client) ?? 0;
    if (open >= this.limits.maxConnectionsPerAddress) return false;
    this.counts.set(client, open + 1);
    state.client = client;
    return true;
  }

  private release(state: SocketState): void {
    const client = state.client;
    if (client === undefined) return;
    state.client = undefined;
    const open = (this.counts.get(client) ?? 1) - 1;
    if (open <= 0) this.counts.delete(client);
    else this.counts.set(client, open);
  }

  /**
   * A request another node forwarded (its A3S-Forwarded verified): its connection counts for the client the
   * signature names, not for the peer node that carries requests of many clients.
   */
  attributeForwarded(request: FastifyRequest, reply: FastifyReply, client: string): void {
    const state = this.sockets.get(request.raw.socket);
    if (state) this.attribute(state, plainAddress(client), reply);
  }

  private onRequest(request: FastifyRequest, reply: FastifyReply): void {
    const socket = request.raw.socket;
    const state = this.sockets.get(socket);
    if (state && this.proxies.trusts(plainAddress(socket.remoteAddress)))
      this.attribute(state, plainAddress(request.ip), reply);
    this.timeBody(request, reply, socket);
  }

  // A proxied connection counts for the client its latest request came from (a keep-alive upstream may carry several).
  private attribute(state: SocketState, client: string, reply: FastifyReply): void {
    if (state.client === client) return;
    this.release(state);
    if (isLoopbackAddress(client)) return;
    if (this.take(state, client)) return;
    this.faults.log(
      'http:connection-cap',
      'warn',
      { ip: client, limit: this.limits.maxConnectionsPerAddress },
      `refused a request: ${client} already has limits.maxConnectionsPerAddress (${this.limits.maxConnectionsPerAddress}) open connections`,
    );
    reply.header('connection', 'close');
    throw new CodeError(
      'TOO_MANY_CONNECTIONS',
      `client ${client} already has ${this.limits.maxConnectionsPerAddress} open connections (limits.maxConnectionsPerAddress); close some and retry`,
      { limit: 'limits.maxConnectionsPerAddress', max: this.limits.maxConnectionsPerAddress },
    );
  }

  private timeBody(request: FastifyRequest, reply: FastifyReply, socket: Socket): void {
    const raw = request.raw;
    // WebSocket upgrades carry no body and must not be cut; a request without a body has nothing to wait for.
    if (raw.complete || raw.headers.upgrade !== undefined) return;
    const length = raw.headers['content-length'];
    if (raw.headers['transfer-encoding'] === undefined && (length === undefined || Number(length) === 0)) return;
    const timer = setTimeout(() => {
      if (raw.complete || socket.destroyed) return;
      const ms = this.limits.bodyTimeoutMs;
      this.faults.log(
        'http:body-timeout',
        'warn',
        { reqId: request.id, ip: clientAddressOf(request), method: request.method, path: request.url.split('?')[0] },
        `request body did not arrive within limits.bodyTimeoutMs (${ms} ms)`,
      );
      if (reply.raw.headersSent || !socket.writable) {
        socket.destroy();
        return;
      }
      socket.end(
        rawErrorResponse(
          'REQUEST_TIMEOUT',
          `body: the request body did not arrive within limits.bodyTimeoutMs (${ms} ms)`,
          { limit: 'limits.bodyTimeoutMs', ms },
        ),
      );
      setTimeout(() => socket.destroy(), 1000).unref();
    }, this.limits.bodyTimeoutMs);
    timer.unref();
    // Keep-alive sockets carry many requests: each request's listeners go when its body has arrived.
    const clear = () => {
      clearTimeout(timer);
      raw.removeListener('end', clear);
      socket.removeListener('close', clear);
    };
    raw.once('end', clear);
    socket.once('close', clear);
  }
}

import { randomUUID } from 'node:crypto';
import { CommandResponseMessageSchema } from '../../../protocol/commands.js';
import { HookResponseMessageSchema, type HookRequestFrame } from '../../../protocol/hooks.js';
import { HostBridgeError } from './host-bridge-error.js';

/** Default bound on unanswered requests per connection; one more is refused with `overloaded`. */
export const DEFAULT_MAX_PENDING_PER_CONNECTION = 256;

/** Who a connection belongs to, so a hook can only be pointed at a socket of the registering tenant. */
export interface HostConnectionBinding {
  tenantId: string;
  principal?: string;
  sessionId?: string;
}

/** Options of a WebSocketHostRegistry. */
export interface WebSocketHostRegistryOptions {
  /** Bound on unanswered requests per connection (default DEFAULT_MAX_PENDING_PER_CONNECTION). */
  maxPendingPerConnection?: number;
  /** Request id generator (default: random UUIDs); ids only need to be unique per connection. */
  newRequestId?: () => string;
}

/** The frame a host request is sent as: hooks and budget checks, or slash commands (answered by `command_response`). */
export type HostRequestFrameType = HookRequestFrame['type'];

interface Pending {
  /** The message type that answers this request. */
  answer: 'hook_response' | 'command_response';
  resolve(answer: unknown): void;
  reject(error: HostBridgeError): void;
}

interface Connection {
  send(frame: HookRequestFrame): void;
  binding: HostConnectionBinding | undefined;
  pending: Map<string, Pending>;
}

/**
 * WebSocket clients that answer host requests. The WebSocket route attaches each socket with a `send`
 * function, passes `hook_response` messages to `deliver`, and detaches the socket when it closes (pending
 * requests then fail at once). A request is only answered by the connection it was sent to.
 */
export class WebSocketHostRegistry {
  private readonly connections = new Map<string, Connection>();
  private readonly maxPending: number;
  private readonly newRequestId: () => string;

  constructor(options: WebSocketHostRegistryOptions = {}) {
    this.maxPending = options.maxPendingPerConnection ?? DEFAULT_MAX_PENDING_PER_CONNECTION;
    this.newRequestId = options.newRequestId ?? (() => randomUUID());
  }

  /** Make a connection available as a host; ids must be unique among attached connections. */
  attach(connectionId: string, send: (frame: HookRequestFrame) => void, binding?: HostConnectionBinding): void {
    if (this.connections.has(connectionId)) throw new Error(`host connection ${connectionId} is already attached`);
    this.connections.set(connectionId, { send, binding, pending: new Map() });
  }

  /** Forget a connection; its pending requests fail with `disconnected` at once. Unknown ids are ignored. */
  detach(connectionId: string): void {
    const connection = this.connections.get(connectionId);
    if (!connection) return;
    this.connections.delete(connectionId);
    for (const pending of [...connection.pending.values()]) {
      pending.reject(
        new HostBridgeError('disconnected', `WebSocket host connection ${connectionId} closed before answering`),
      );
    }
  }

  /** True when the connection is attached. */
  has(connectionId: string): boolean {
    return this.connections.has(connectionId);
  }

  /** Who the connection belongs to (undefined when unknown or attached without a binding). */
  bindingOf(connectionId: string): HostConnectionBinding | undefined {
    return this.connections.get(connectionId)?.binding;
  }

  /** Ids of the attached connections registered on an events socket of this session by its tenant, newest last. */
  hostsOf(tenantId: string, sessionId: string): string[] {
    return [...this.connections]
      .filter(([, c]) => c.binding?.tenantId === tenantId && c.binding.sessionId === sessionId)
      .map(([id]) => id);
  }

  /** Number of unanswered requests on a connection. */
  pendingCount(connectionId: string): number {
    return this.connections.get(connectionId)?.pending.size ?? 0;
  }

  /**
   * Hand a client message to the request it answers. Returns true when it settled a pending request;
   * false for messages that fail the `hook_response` schema, unknown connections and unknown (or already
   * answered, timed out) request ids, which are ignored.
   */
  deliver(connectionId: string, message: unknown): boolean {
    const hook = HookResponseMessageSchema.safeParse(message);
    const parsed = hook.success ? hook : CommandResponseMessageSchema.safeParse(message);
    if (!parsed.success) return false;
    const pending = this.connections.get(connectionId)?.pending.get(parsed.data.request_id);
    if (!pending || pending.answer !== parsed.data.type) return false;
    const { type: _type, request_id: _requestId, ...answer } = parsed.data;
    pending.resolve(answer);
    return true;
  }

  /**
   * Send a `hook_request` (or `command_request`) frame and wait for its `hook_response` (`command_response`): resolves with the answer's fields
   * (without `type` and `request_id`); rejects with HostBridgeError on timeout, abort, detach, an unknown
   * connection, a full pending table or a failing `send`.
   */
  request(
    connectionId: string,
    kind: string,
    payload: Record<string, unknown>,
    timeoutMs: number,
    signal?: AbortSignal,
    frame: HostRequestFrameType = 'hook_request',
  ): Promise<unknown> {
    const answer = frame === 'hook_request' ? 'hook_response' : 'command_response';
    const connection = this.connections.get(connectionId);
    if (!connection)
      return Promise.reject(new HostBridgeError('unknown_connection', `no WebSocket host connection ${connectionId}`));
    if (signal?.aborted) return Promise.reject(new HostBridgeError('aborted', 'request aborted by the caller'));
    if (connection.pending.size >= this.maxPending) {
      return Promise.reject(
        new HostBridgeError(
          'overloaded',
          `WebSocket host connection ${connectionId} already has ${this.maxPending} unanswered requests (maxPendingPerConnection)`,
        ),
      );
    }
    let requestId = this.newRequestId();
    while (connection.pending.has(requestId)) requestId = this.newRequestId();
    return new Promise<unknown>((resolve, reject) => {
      const finish = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        connection.pending.delete(requestId);
      };
      const entry: Pending = {
        answer,
        resolve: (answer) => {
          finish();
          resolve(answer);
        },
        reject: (error) => {
          finish();
          reject(error);
        },
      };
      const onAbort = () => entry.reject(new HostBridgeError('aborted', 'request aborted by the caller'));
      const timer = setTimeout(
        () => entry.reject(new HostBridgeError('timeout', `WebSocket host gave no ${answer} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      connection.pending.set(requestId, entry);
      try {
        connection.send({ type: frame, request_id: requestId, kind, payload });
      } catch (error) {
        entry.reject(
          new HostBridgeError(
            'send_failed',
            `could not send to WebSocket host connection ${connectionId}: ${error instanceof Error ? error.message : String(error)}`,
          ),
        );
      }
    });
  }
}

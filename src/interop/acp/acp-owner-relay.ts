import { client, type AgentContext, type ClientConnection } from '@agentclientprotocol/sdk';
import { WebSocket } from 'ws';
import { CodeError } from '../../errors.js';
import { websocketAcpStream } from './websocket-acp-stream.js';

/** How long opening the owner's ACP socket may take before the call is OWNER_UNREACHABLE. */
const CONNECT_TIMEOUT_MS = 10_000;

/** Unsent bytes the owner's socket may hold (the editor's own bound applies on the editor's side). */
const UPSTREAM_BUFFERED_BYTES = 8 * 1024 * 1024;

/** How the relay reaches an owner: its origin for a SESSION_OWNED_ELSEWHERE (undefined: the error stands) and the upgrade's headers. */
export interface AcpOwnerRoute {
  /** The owner's origin; throws OWNER_UNREACHABLE when the hop cannot be made, undefined when the error must stand. */
  target(error: CodeError): string | undefined;
  /** The upgrade headers for a connection to the owner: the editor's credentials and a fresh A3S-Forwarded. */
  headers(): Record<string, string>;
}

/** A session-scoped ACP method that can be sent on to the session's owner. */
export type RelayedRequest = 'session/load' | 'session/prompt' | 'session/set_mode';

/**
 * ACP for sessions another node owns. An editor's ACP connection is not bound to one session, so it is not
 * proxied whole: a session-scoped call (session/load, session/prompt, session/set_mode, session/cancel) for a
 * session owned elsewhere goes over one ACP connection per owner, opened with the editor's credentials and a
 * signed A3S-Forwarded (the owner authorizes the editor again). What the owner sends back for that call
 * (session/update notifications, session/request_permission requests) is passed to the editor in order, and
 * the answer only after the updates before it.
 */
export class AcpOwnerRelay {
  private readonly owners = new Map<string, Promise<ClientConnection>>();
  /** Updates relayed to the editor, in arrival order; an answer waits for the updates before it. */
  private relayed: Promise<void> = Promise.resolve();
  private editor: AgentContext | undefined;
  private closed = false;

  constructor(private readonly route: AcpOwnerRoute) {}

  /**
   * Open the session here with `open`, or, when another node owns it and forwarding applies, name that
   * owner's origin. Errors other than SESSION_OWNED_ELSEWHERE, and that error when it must stand, propagate.
   */
  async locate<S>(open: () => Promise<S>): Promise<{ local: S } | { origin: string }> {
    try {
      return { local: await open() };
    } catch (error) {
      if (!(error instanceof CodeError) || error.code !== 'SESSION_OWNED_ELSEWHERE') throw error;
      const origin = this.route.target(error);
      if (origin === undefined) throw error;
      return { origin };
    }
  }

  /** Send a session-scoped request to the owner at `origin`; its answer comes after the updates it relayed. */
  async request<T>(
    origin: string,
    editor: AgentContext,
    method: RelayedRequest,
    params: object,
    signal?: AbortSignal,
  ): Promise<T> {
    this.editor = editor;
    const owner = await this.connection(origin);
    const answer = (await owner.agent.request(
      method,
      params as never,
      signal ? { cancellationSignal: signal } : undefined,
    )) as T;
    await this.relayed;
    return answer;
  }

  /** session/cancel for a session owned at `origin` (a notification has no answer). */
  async notify(origin: string, params: { sessionId: string }): Promise<void> {
    const owner = await this.connection(origin);
    await owner.agent.notify('session/cancel', params);
  }

  /** Close every connection to an owner (the editor's connection closed). */
  close(): void {
    this.closed = true;
    for (const pending of this.owners.values())
      void pending.then(
        (owner) => owner.close(),
        () => undefined,
      );
    this.owners.clear();
  }

  private connection(origin: string): Promise<ClientConnection> {
    if (this.closed)
      return Promise.reject(
        new CodeError('OWNER_UNREACHABLE', 'the ACP connection is closing', { retryAfterSeconds: 1 }),
      );
    let pending = this.owners.get(origin);
    if (!pending) {
      pending = this.open(origin);
      this.owners.set(origin, pending);
      pending.then(
        (owner) => void owner.closed.then(() => this.owners.get(origin) === pending && this.owners.delete(origin)),
        () => this.owners.get(origin) === pending && this.owners.delete(origin),
      );
    }
    return pending;
  }

  private async open(origin: string): Promise<ClientConnection> {
    const socket = new WebSocket(`${origin.replace(/^http/, 'ws')}/acp`, {
      headers: this.route.headers(),
      handshakeTimeout: CONNECT_TIMEOUT_MS,
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', (error) =>
        reject(
          new CodeError(
            'OWNER_UNREACHABLE',
            `the session's owner ${origin} did not take the ACP connection (${error.message}); retry shortly`,
            { retryAfterSeconds: 1 },
          ),
        ),
      );
      socket.once('unexpected-response', (_request, response) => {
        response.resume();
        reject(
          new CodeError(
            'OWNER_UNREACHABLE',
            `the session's owner ${origin} refused the ACP connection (HTTP ${response.statusCode}); retry shortly`,
            { retryAfterSeconds: 1 },
          ),
        );
      });
    });
    const stream = websocketAcpStream(socket, { maxBufferedBytes: UPSTREAM_BUFFERED_BYTES }, () =>
      socket.close(1011, 'slow editor'),
    );
    const app = client({ name: 'a3s-code-server-relay' })
      .onNotification('session/update', ({ params }) => {
        const editor = this.editor;
        if (editor)
          this.relayed = this.relayed.then(() => editor.notify('session/update', params)).catch(() => undefined);
      })
      .onRequest('session/request_permission', async ({ params, signal }) => {
        const editor = this.editor;
        if (!editor) return { outcome: { outcome: 'cancelled' as const } };
        // The tool call's updates reach the editor before it is asked about it.
        await this.relayed;
        return editor.request('session/request_permission', params, { cancellationSignal: signal });
      });
    const owner = app.connect(stream);
    socket.once('close', () => owner.close());
    try {
      await owner.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    } catch (error) {
      owner.close();
      socket.close();
      throw error;
    }
    return owner;
  }
}

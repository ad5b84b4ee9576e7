import type { CommandInfo } from '../protocol/commands.js';
import type { HookEvent, HookInfo, HookMatcher } from '../protocol/hooks.js';
import { A3sError, toA3sError } from './a3s-error.js';
import { hostReconnectDelay, hostReconnectIsFatal } from './host-reconnect.js';
import {
  HostRegistrations,
  type BudgetGuard,
  type CommandEntry,
  type CommandHandler,
  type CommandOptions,
  type CommandSpec,
  type HookEntry,
  type HookHandler,
  type HookOptions,
  type HostFrame,
} from './host-registrations.js';
import { seg } from './http-transport.js';
import { eventsSocketUrl } from './socket-event-stream.js';
import { falseOn, requireWebSocket, sessionPath, type SessionContext } from './session-context.js';
import { messageText, WS_OPEN, type WebSocketLike } from './websocket-like.js';

/** The typed error of a host socket closed before `host_registered`. */
const CLOSE_ERRORS: Record<number, string> = {
  4001: 'UNAUTHORIZED',
  4003: 'FORBIDDEN',
  4004: 'SESSION_NOT_FOUND',
  4010: 'SESSION_CLOSED',
};

/**
 * The client as the session's WebSocket host: one events socket per Session, opened on the first
 * registerHook / registerCommand / setBudgetGuard, which sends `host_register` and names the
 * `connection_id` of its `host_registered` answer in the REST registrations. It answers `hook_request`
 * frames (hooks, and `budget_check` for the budget guard) with `hook_response` and `command_request`
 * frames with `command_response`, from the JS callbacks. When the socket goes away the server fails
 * closed: gating hooks block, budget checks deny, commands fail. A socket that closes by itself (1012 when
 * its node shuts down or the session moves, 1006, a dropped network, ...) is reopened with backoff; the new
 * socket registers as a host again and every hook, command and the budget guard this client registered are
 * registered again under the new connection id (same ids: the server replaces the old entries), before any
 * other registration goes out. 4001/4003/4004/4010/1008 and refused re-registrations stop it (see
 * HostReconnectOptions.onReconnect); disconnect() stops it too.
 */
export class SessionHost {
  private socket: WebSocketLike | undefined;
  private connection: Promise<string> | undefined;
  private readonly registrations: HostRegistrations;
  // Set by disconnect(): no reconnect until something is registered again.
  private disconnected = false;
  private attempts = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly ctx: SessionContext) {
    this.registrations = new HostRegistrations(ctx.sessionId);
  }

  /** The connection id of the host socket, opening and registering it on first use. */
  connectionId(): Promise<string> {
    this.connection ??= this.openAtOwner().catch((error: unknown) => {
      this.connection = undefined;
      throw error;
    });
    return this.connection;
  }

  /** True while the host socket is open. */
  get connected(): boolean {
    return this.socket?.readyState === WS_OPEN;
  }

  /** Register a hook answered by `handler` (the seed's registerHook); without a handler it only observes (answers continue). */
  async registerHook(
    id: string,
    event: HookEvent,
    matcher: HookMatcher | null | undefined,
    options: HookOptions | null | undefined,
    handler?: HookHandler,
  ): Promise<HookInfo> {
    this.disconnected = false;
    const connectionId = await this.connectionId();
    const entry: HookEntry = { event, matcher, options, handler };
    const previous = this.registrations.hooks.get(id);
    this.registrations.hooks.set(id, entry);
    try {
      return await this.postHook(id, entry, connectionId);
    } catch (error) {
      if (previous) this.registrations.hooks.set(id, previous);
      else this.registrations.hooks.delete(id);
      throw error;
    }
  }

  private async postHook(id: string, { event, matcher, options }: HookEntry, connectionId: string): Promise<HookInfo> {
    const body = {
      id,
      event,
      ...(matcher ? { matcher } : {}),
      ...(options?.priority !== undefined ? { priority: options.priority } : {}),
      ...(options?.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options?.asyncExecution !== undefined ? { asyncExecution: options.asyncExecution } : {}),
      ...(options?.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
      endpoint: { type: 'websocket', connectionId },
    };
    return (await this.ctx.transport.post<{ hook: HookInfo }>(sessionPath(this.ctx, '/hooks'), body)).hook;
  }

  /** Remove a hook: true when it was there (the seed's boolean). */
  async unregisterHook(id: string): Promise<boolean> {
    const removed = await falseOn(['NOT_FOUND'], () =>
      this.ctx.transport.delete(sessionPath(this.ctx, `/hooks/${seg(id)}`)),
    );
    this.registrations.hooks.delete(id);
    return removed !== false;
  }

  /** The session's hooks, in run order (config hooks included). */
  async hooksList(): Promise<HookInfo[]> {
    return (await this.ctx.transport.get<{ hooks: HookInfo[] }>(sessionPath(this.ctx, '/hooks'))).hooks;
  }

  /** Register a slash command: a JS handler (a websocket command answered here), or a template / webhook spec. */
  async registerCommand(
    name: string,
    description: string,
    handler: CommandHandler | CommandSpec,
    options: CommandOptions = {},
  ): Promise<CommandInfo> {
    if (typeof handler === 'function') this.disconnected = false;
    const entry: CommandEntry = { description, handler, options };
    const connectionId = typeof handler === 'function' ? await this.connectionId() : undefined;
    const command = await this.postCommand(name, entry, connectionId);
    this.registrations.commands.set(name, entry);
    return command;
  }

  private async postCommand(
    name: string,
    { description, handler, options }: CommandEntry,
    connectionId: string | undefined,
  ): Promise<CommandInfo> {
    const base = {
      name,
      description,
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.override !== undefined ? { override: options.override } : {}),
    };
    const body = typeof handler === 'function' ? { ...base, kind: 'websocket', connectionId } : { ...base, ...handler };
    return (await this.ctx.transport.post<{ command: CommandInfo }>(sessionPath(this.ctx, '/commands'), body)).command;
  }

  /** Remove a command registered on the session: true when it was there. */
  async unregisterCommand(name: string): Promise<boolean> {
    const removed = await falseOn(['COMMAND_NOT_FOUND'], () =>
      this.ctx.transport.delete(sessionPath(this.ctx, `/commands/${seg(name)}`)),
    );
    this.registrations.commands.delete(name);
    return removed !== false;
  }

  /** The session's slash commands (built-ins, config, registered). */
  async listCommands(): Promise<CommandInfo[]> {
    return (await this.ctx.transport.get<{ commands: CommandInfo[] }>(sessionPath(this.ctx, '/commands'))).commands;
  }

  /** Make the JS guard the session's budget host (null removes it; the server's built-in limits stay). */
  async setBudgetGuard(guard: BudgetGuard | null): Promise<void> {
    if (guard === null) {
      this.registrations.guard = undefined;
      await this.ctx.transport.delete(sessionPath(this.ctx, '/budget-host'));
      return;
    }
    this.disconnected = false;
    const connectionId = await this.connectionId();
    this.registrations.guard = guard;
    await this.putGuard(guard, connectionId);
  }

  private async putGuard(guard: BudgetGuard, connectionId: string): Promise<void> {
    await this.ctx.transport.put(sessionPath(this.ctx, '/budget-host'), {
      type: 'websocket',
      connectionId,
      ...(guard.timeoutMs !== undefined ? { timeoutMs: guard.timeoutMs } : {}),
    });
  }

  /** Close the host socket and stop reconnecting; the server then fails closed for every registration naming it. */
  disconnect(): void {
    this.disconnected = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    const socket = this.socket;
    this.socket = undefined;
    this.connection = undefined;
    socket?.close(1000, 'host disconnected');
  }

  /** Register everything this client registered on a new host connection (before anything else goes out). */
  private async reregister(socket: WebSocketLike, connectionId: string): Promise<void> {
    for (const [id, entry] of this.registrations.hooks) await this.postHook(id, entry, connectionId);
    for (const [name, entry] of this.registrations.commands)
      if (typeof entry.handler === 'function') await this.postCommand(name, entry, connectionId);
    if (this.registrations.guard) await this.putGuard(this.registrations.guard, connectionId);
    if (socket.readyState !== WS_OPEN)
      throw toA3sError('NETWORK_ERROR', 'host socket closed while its registrations were restored', 0);
  }

  /** After the host socket went away by itself (or an attempt failed): try again with backoff, or give up. */
  private scheduleReconnect(code: number, reason: string, error?: A3sError): void {
    if (this.disconnected || this.timer !== undefined || this.connection !== undefined || !this.registrations.any)
      return;
    const options = this.ctx.hostReconnect;
    const max = options?.maxAttempts ?? 10;
    if (hostReconnectIsFatal(code, error) || this.attempts >= max) {
      const attempts = this.attempts;
      this.attempts = 0;
      options?.onReconnect?.({ code, reason, attempt: attempts, ...(error ? { error } : {}), final: true });
      return;
    }
    this.attempts += 1;
    const attempt = this.attempts;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        if (this.disconnected) return;
        this.connectionId().then(
          (connectionId) => {
            this.attempts = 0;
            options?.onReconnect?.({ code, reason, attempt, connectionId, final: false });
          },
          (failure: unknown) => {
            const typed = failure instanceof A3sError ? failure : toA3sError('NETWORK_ERROR', String(failure), 0);
            const closeCode = typeof typed.details.closeCode === 'number' ? typed.details.closeCode : code;
            const last = hostReconnectIsFatal(closeCode, typed) || attempt >= max;
            if (!last)
              options?.onReconnect?.({ code: closeCode, reason: typed.message, attempt, error: typed, final: false });
            this.scheduleReconnect(closeCode, typed.message, typed);
          },
        );
      },
      hostReconnectDelay(options, attempt),
    );
  }

  /**
   * With route 'no-forward' a node that does not own the session would not take the host's registration: the
   * session is looked up first (a 421 is followed to its owner, which the transport remembers) and the socket
   * opened at the owner.
   */
  private async openAtOwner(): Promise<string> {
    const transport = this.ctx.transport;
    if (transport.route === 'no-forward') await transport.get(sessionPath(this.ctx));
    return this.open(transport.ownerOf(this.ctx.sessionId) ?? transport.baseUrl);
  }

  /** Open a host socket at `base`, register as a host, then register again what this client registered. */
  private async open(base: string): Promise<string> {
    const WebSocket = await requireWebSocket(this.ctx);
    return new Promise<string>((resolve, reject) => {
      const socket = new WebSocket(eventsSocketUrl(base, this.ctx.sessionId, undefined));
      this.socket = socket;
      let registered = false;
      let ready = false;
      socket.onopen = () => {
        const token = this.ctx.transport.token;
        if (token !== undefined) socket.send(JSON.stringify({ type: 'auth', token }));
        socket.send(JSON.stringify({ type: 'host_register' }));
      };
      socket.onerror = () => {};
      socket.onclose = (event) => {
        const current = this.socket === socket;
        if (current) {
          this.socket = undefined;
          this.connection = undefined;
        }
        if (!registered)
          reject(
            toA3sError(
              CLOSE_ERRORS[event.code] ?? 'NETWORK_ERROR',
              `host socket closed before host_registered (${event.code}${event.reason ? `: ${event.reason}` : ''})`,
              0,
              { closeCode: event.code },
            ),
          );
        // A socket still restoring its registrations fails that (the attempt's failure schedules the next).
        else if (ready && current) this.scheduleReconnect(event.code, event.reason);
      };
      socket.onmessage = (message) => {
        let frame: HostFrame;
        try {
          frame = JSON.parse(messageText(message.data)) as HostFrame;
        } catch {
          return;
        }
        const payload = (typeof frame.payload === 'object' && frame.payload !== null ? frame.payload : {}) as Record<
          string,
          unknown
        >;
        if (frame.type === 'host_registered' && !registered) {
          registered = true;
          const connectionId = String(payload.connection_id);
          this.reregister(socket, connectionId).then(
            () => {
              ready = true;
              resolve(connectionId);
            },
            (error: unknown) => {
              reject(error);
              socket.close(1000, 'host registrations could not be restored');
            },
          );
        } else if (frame.type === 'error' && !registered) {
          registered = true;
          const details = (
            typeof payload.details === 'object' && payload.details !== null ? payload.details : {}
          ) as Record<string, unknown>;
          reject(toA3sError(String(payload.code), String(payload.message), 0, { ...payload, ...details }));
          socket.close();
        } else if (
          (frame.type === 'hook_request' || frame.type === 'command_request') &&
          typeof frame.request_id === 'string'
        ) {
          void this.answer(socket, frame.type, frame.request_id, String(frame.kind), payload);
        } else if (frame.type === 'turn_end') {
          this.registrations.recordTurn(frame);
        }
      };
    });
  }

  private async answer(
    socket: WebSocketLike,
    type: 'hook_request' | 'command_request',
    requestId: string,
    kind: string,
    payload: Record<string, unknown>,
  ): Promise<void> {
    const answer = await this.registrations.answer(type, requestId, kind, payload);
    if (socket.readyState === WS_OPEN) socket.send(JSON.stringify(answer));
  }
}

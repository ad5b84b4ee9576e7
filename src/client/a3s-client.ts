import type { z } from 'zod';
import type { ChangeRange, ChangeSet } from '../protocol/change-set.js';
import type { ForkRequestSchema } from '../protocol/fork.js';
import type { HealthResponseSchema } from '../protocol/http.js';
import type { RevertRequest, RevertResponse } from '../protocol/revert.js';
import type { SessionOptionsSchema } from '../protocol/session-options.js';
import type { WebhookDelivery } from '../protocol/webhooks.js';
import type { WorkerAgentSpecInput } from '../protocol/worker-agents.js';
import { falseOn } from './session-context.js';
import type { HostReconnectOptions } from './host-reconnect.js';
import { HttpTransport, seg, type RouteOption } from './http-transport.js';
import { ScheduleClient } from './schedule-client.js';
import { Session, type SessionInfo } from './session.js';
import { WebSocketSource, type WebSocketConstructor } from './websocket-like.js';

/** SessionOptions as sent (the body of POST /v1/sessions, every seed name). */
export type SessionOptionsInput = z.input<typeof SessionOptionsSchema>;
/** What POST /v1/sessions/:id/fork takes: where to cut (atRunId or atMessage), the fork's id, its workspace. */
export type ForkOptions = z.input<typeof ForkRequestSchema>;
/** What POST .../runs/:runId/revert and POST .../unrevert take: `force` writes even the paths changed since. */
export type RevertOptions = RevertRequest;
/** Health answer. */
export type Health = z.infer<typeof HealthResponseSchema>;

/** The body of a revert or unrevert: `force` only when given. */
function revertBody(options: RevertOptions): RevertRequest {
  return options.force !== undefined ? { force: options.force } : {};
}

/** Options of A3sClient. */
export interface A3sClientOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** Bearer token (omit for an anonymous loopback server). */
  token?: string;
  /** WebSocket implementation for streams and callbacks (default: the global one; in Node 20 pass `WebSocket` from `ws`). */
  WebSocket?: WebSocketConstructor;
  /** fetch implementation (default: the global fetch). */
  fetch?: typeof fetch;
  /**
   * 'no-forward': send `A3S-Route: no-forward`, so a cluster node answers 421 SESSION_OWNED_ELSEWHERE for a
   * session another node owns instead of forwarding the request; the client then sends it once more, to the
   * owner URL the answer names (http(s) only, same token, one hop). That URL must be reachable from the client.
   * Default 'forward': the node forwards (WebSockets are always proxied by the node).
   */
  route?: RouteOption;
  /** How a session's host socket (hooks, commands, budget guard) reconnects and re-registers after it drops. */
  hostReconnect?: HostReconnectOptions;
}

/** The typed client of an A3S Code Server: sessions with the seed's Node SDK names over HTTP and WebSocket. */
export class A3sClient {
  private readonly transport: HttpTransport;
  private readonly WebSocket: WebSocketSource;
  private readonly hostReconnect: HostReconnectOptions | undefined;
  /** The tenant's schedules (POST/GET /v1/schedules, GET/PATCH/DELETE /v1/schedules/:id, .../trigger). */
  readonly schedules: ScheduleClient;

  constructor(options: A3sClientOptions) {
    this.transport = new HttpTransport(options);
    this.schedules = new ScheduleClient(this.transport);
    this.WebSocket = new WebSocketSource(options.WebSocket);
    this.hostReconnect = options.hostReconnect;
  }

  /** The server's base URL. */
  get baseUrl(): string {
    return this.transport.baseUrl;
  }

  private wrap(info: SessionInfo, resumed = false): Session {
    return new Session(
      {
        transport: this.transport,
        WebSocket: this.WebSocket,
        ...(this.hostReconnect ? { hostReconnect: this.hostReconnect } : {}),
      },
      info,
      resumed,
    );
  }

  private async create(body: SessionOptionsInput): Promise<Session> {
    const answer = await this.transport.post<{ session: SessionInfo; resumed?: boolean }>('/v1/sessions', body);
    return this.wrap(answer.session, answer.resumed === true);
  }

  /** Create a session in a workspace (the seed's `agent.session(workspace, options)`). */
  session(workspace?: string, options: SessionOptionsInput = {}): Promise<Session> {
    return this.create({ ...options, ...(workspace !== undefined ? { workspace } : {}) });
  }

  /** Resume a stored session by id (`{sessionId, resume: true}`). */
  resumeSession(sessionId: string, options: SessionOptionsInput = {}): Promise<Session> {
    return this.create({ ...options, sessionId, resume: true });
  }

  /** The seed's async twin of session (the same call here: every call is asynchronous). */
  sessionAsync(workspace?: string, options: SessionOptionsInput = {}): Promise<Session> {
    return this.session(workspace, options);
  }

  /** The seed's async twin of resumeSession. */
  resumeSessionAsync(sessionId: string, options: SessionOptionsInput = {}): Promise<Session> {
    return this.resumeSession(sessionId, options);
  }

  /**
   * Create a session that runs as a built-in, registered or worker agent: the seed's `sessionForAgent(workspace,
   * agent, workers, options)` (the workers are registered first, so `agent` may name one of them) or
   * `sessionForAgent(workspace, agent, options)`.
   */
  sessionForAgent(
    workspace: string | undefined,
    agent: string,
    workersOrOptions: readonly WorkerAgentSpecInput[] | SessionOptionsInput = {},
    maybeOptions: SessionOptionsInput = {},
  ): Promise<Session> {
    const workers = Array.isArray(workersOrOptions) ? (workersOrOptions as readonly WorkerAgentSpecInput[]) : [];
    const options = Array.isArray(workersOrOptions) ? maybeOptions : (workersOrOptions as SessionOptionsInput);
    const workerAgents = [...(options.workerAgents ?? []), ...workers];
    return this.create({
      ...options,
      ...(workspace !== undefined ? { workspace } : {}),
      ...(workerAgents.length > 0 ? { workerAgents } : {}),
      agent,
    });
  }

  /** Create a session whose top-level actor is a worker (the seed's `sessionForWorker(workspace, spec, options)`). */
  sessionForWorker(
    workspace: string | undefined,
    worker: WorkerAgentSpecInput,
    options: SessionOptionsInput = {},
  ): Promise<Session> {
    return this.sessionForAgent(workspace, worker.name, [worker], options);
  }

  /** The seed's async twin of sessionForAgent. */
  sessionForAgentAsync(...args: Parameters<A3sClient['sessionForAgent']>): Promise<Session> {
    return this.sessionForAgent(...args);
  }

  /** The seed's async twin of sessionForWorker. */
  sessionForWorkerAsync(
    workspace: string | undefined,
    worker: WorkerAgentSpecInput,
    options: SessionOptionsInput = {},
  ): Promise<Session> {
    return this.sessionForWorker(workspace, worker, options);
  }

  /**
   * Fork a session (ours, like the seed's session methods: `client.fork(sessionId, options)`): a new session of the
   * caller's tenant with the transcript up to just before run `atRunId`, the first `atMessage` messages, or all of
   * it; its `forkedFrom` says where it came from. ForkPointUnavailableError when the run's start was compacted.
   */
  async fork(sessionId: string, options: ForkOptions = {}): Promise<Session> {
    const answer = await this.transport.post<{ session: SessionInfo }>(`/v1/sessions/${seg(sessionId)}/fork`, options);
    return this.wrap(answer.session);
  }

  /**
   * A run's change set (GET .../runs/:runId/changes, docs/changes.md): the git unified diff (`patch_base64`) and
   * the changed files. ChangesCapturingError (425) while the run runs, NoChangeSetError (422, `details.reason`) when
   * it has none, RunNotFoundError / SessionNotFoundError (404).
   */
  changes(sessionId: string, runId: string): Promise<ChangeSet> {
    return this.transport.get<ChangeSet>(`/v1/sessions/${seg(sessionId)}/runs/${seg(runId)}/changes`);
  }

  /**
   * The session's run webhook deliveries, newest first (GET .../webhooks/deliveries, docs/webhooks.md): each one's
   * `deliveryId`, `event`, `status` (pending, delivered, failed), `attempts` and last error.
   */
  async webhookDeliveries(sessionId: string): Promise<WebhookDelivery[]> {
    const answer = await this.transport.get<{ deliveries: WebhookDelivery[] }>(
      `/v1/sessions/${seg(sessionId)}/webhooks/deliveries`,
    );
    return answer.deliveries;
  }

  /**
   * One diff from run `from`'s base to run `to`'s result (GET .../changes?from&to): the same errors as changes for
   * either run, and NoChangeSetError with `reason: tree_missing` when the node no longer holds both trees.
   */
  changesRange(sessionId: string, range: { from: string; to: string }): Promise<ChangeRange> {
    return this.transport.get<ChangeRange>(`/v1/sessions/${seg(sessionId)}/changes`, {
      from: range.from,
      to: range.to,
    });
  }

  /**
   * Revert run `runId` (POST .../runs/:runId/revert, docs/changes.md): its files and every later run's back to before
   * it, its messages hidden from the model. RevertConflictError (409, `details.paths`) when a path was changed since
   * the last capture unless `force`; RevertUnavailableError (409) when the run was compacted since or is reverted;
   * NoChangeSetError (422); SessionBusyError (409) while a run is active.
   */
  revert(sessionId: string, runId: string, options: RevertOptions = {}): Promise<RevertResponse> {
    return this.transport.post<RevertResponse>(
      `/v1/sessions/${seg(sessionId)}/runs/${seg(runId)}/revert`,
      revertBody(options),
    );
  }

  /**
   * Undo the revert (POST .../unrevert): the reverted runs' files and messages back. NothingRevertedError (409) when
   * nothing is reverted or a run started since; RevertConflictError (409, `details.paths`) unless `force`.
   */
  unrevert(sessionId: string, options: RevertOptions = {}): Promise<RevertResponse> {
    return this.transport.post<RevertResponse>(`/v1/sessions/${seg(sessionId)}/unrevert`, revertBody(options));
  }

  /** A live session by id (SessionNotFoundError when there is none for this tenant). */
  async getSession(sessionId: string): Promise<Session> {
    return this.wrap((await this.transport.get<{ session: SessionInfo }>(`/v1/sessions/${seg(sessionId)}`)).session);
  }

  /** The ids of the caller's live sessions, as the seed's `agent.listSessions()` answers. */
  async listSessions(): Promise<string[]> {
    return (await this.sessionInfos()).map((info) => info.id);
  }

  /** The caller's live sessions with their infos (ours, additive: id, workspace, model, busy, currentRun, ...). */
  async sessionInfos(): Promise<SessionInfo[]> {
    return (await this.transport.get<{ sessions: SessionInfo[] }>('/v1/sessions')).sessions;
  }

  /** Close a session by id: true when it was open, false when already closed or unknown. */
  async closeSession(sessionId: string): Promise<boolean> {
    const answer = await falseOn(['SESSION_NOT_FOUND'], () =>
      this.transport.delete<{ closed: boolean }>(`/v1/sessions/${seg(sessionId)}`),
    );
    return answer !== false && answer.closed;
  }

  /** Liveness (GET /healthz). */
  health(): Promise<Health> {
    return this.transport.get<Health>('/healthz');
  }
}

import type { z } from 'zod';
import type { ChatMessage } from '../protocol/chat-message.js';
import type { CompactResponse } from '../protocol/compaction.js';
import type { EventEnvelope } from '../protocol/event-envelope.js';
import type { SessionInfoSchema } from '../protocol/http.js';
import type { AgentResult, RunRecord, RunStatus } from '../protocol/run-record.js';
import type { EventStream } from './event-stream.js';
import { seg } from './http-transport.js';
import { falseOn, type SessionContext } from './session-context.js';
import { SessionAttachments } from './session-attachments.js';
import { SessionDelegates } from './session-delegates.js';
import { SessionHost } from './session-host.js';
import {
  SessionRuns,
  type EventsOptions,
  type RunEventsPage,
  type RunFinished,
  type RunOptions,
  type RunStarted,
  type SessionRequest,
  type StreamOptions,
} from './session-runs.js';

/** Session info as the server answers it. */
export type SessionInfo = z.infer<typeof SessionInfoSchema>;

/**
 * A session of the server, with the seed's Node SDK method names. Identity (`sessionId`, `workspace`,
 * `tenantId`, `principal`, `agentTemplateId`, `correlationId`) and the seed's getters `initWarning` and
 * `hasMemory` are plain properties (fixed at creation); `isClosed()` answers at once, from this handle; every
 * other method talks to the server and returns a Promise. Failures reject with the A3sError subclass of their code.
 */
export class Session extends SessionDelegates {
  readonly sessionId: string;
  readonly workspace: string;
  readonly tenantId: string | undefined;
  readonly principal: string | undefined;
  readonly agentTemplateId: string | undefined;
  readonly correlationId: string | undefined;
  /** The session info of the create / resume / get answer (`info()` fetches it again). */
  readonly created: SessionInfo;
  /** True when the server resumed a stored session instead of creating one. */
  readonly resumed: boolean;
  /** Non-fatal notes about the options the session was built with, null when none (the seed's `initWarning` getter). */
  readonly initWarning: string | null;
  /** True when a memory store resolved (the seed's `hasMemory` getter). */
  readonly hasMemory: boolean;
  private closedHere: boolean;
  private readonly runCalls: SessionRuns;
  private readonly attachments: SessionAttachments;
  private readonly host: SessionHost;

  constructor(ctx: Omit<SessionContext, 'sessionId'>, info: SessionInfo, resumed = false) {
    super({ ...ctx, sessionId: info.id });
    this.sessionId = info.id;
    this.workspace = info.workspace;
    this.tenantId = info.labels.tenantId;
    this.principal = info.labels.principal;
    this.agentTemplateId = info.labels.agentTemplateId;
    this.correlationId = info.labels.correlationId;
    this.created = info;
    this.resumed = resumed;
    this.initWarning = info.initWarning;
    this.hasMemory = info.hasMemory;
    this.closedHere = info.closed;
    this.runCalls = new SessionRuns(this.ctx);
    this.attachments = new SessionAttachments(this.ctx);
    this.host = new SessionHost(this.ctx);
  }

  // Conversation and runs

  /**
   * Run a prompt to its end and answer the AgentResult. With `history`, a side question that leaves the
   * transcript unchanged. A failed or cancelled run rejects with its run error (e.g. CancelledError,
   * BudgetExhaustedError; details: runId, run, result).
   */
  send(prompt: string, history?: ChatMessage[], options: RunOptions = {}): Promise<AgentResult> {
    return this.runCalls.send(prompt, history, options);
  }

  /** The seed's alias of send. */
  run(prompt: string, history?: ChatMessage[], options: RunOptions = {}): Promise<AgentResult> {
    return this.runCalls.send(prompt, history, options);
  }

  /** The seed's object form of send: `{prompt, history?, attachments?}` (attachments as sendWithAttachments takes them). */
  sendRequest(request: SessionRequest, options: RunOptions = {}): Promise<AgentResult> {
    return this.runCalls.sendRequest(request, options);
  }

  /** The seed's object form of stream: `{prompt, history?, attachments?}`. */
  streamRequest(request: SessionRequest, options: StreamOptions = {}): Promise<EventStream> {
    return this.runCalls.streamRequest(request, options);
  }

  /** The seed's sendWithAttachments(prompt, attachments, history?): send with images and text files (AttachmentInput). */
  sendWithAttachments: SessionRuns['sendWithAttachments'] = (prompt, attachments, history, options) =>
    this.runCalls.sendWithAttachments(prompt, attachments, history, options);
  /** The seed's streamWithAttachments(prompt, attachments, history?): stream with attachments, like stream. */
  streamWithAttachments: SessionRuns['streamWithAttachments'] = (prompt, attachments, history, options) =>
    this.runCalls.streamWithAttachments(prompt, attachments, history, options);
  /** Upload the raw bytes of an image or text file: its reference `{attachmentId, type, mediaType, name?, bytes, sha256}`. */
  uploadAttachment: SessionAttachments['uploadAttachment'] = (bytes, options) =>
    this.attachments.uploadAttachment(bytes, options);
  /** The session's uploaded attachments (references). */
  listAttachments: SessionAttachments['listAttachments'] = () => this.attachments.listAttachments();

  /** POST .../runs as is: 202 RunStarted, or with `wait: true` the RunFinished answer (a failed run resolves too). */
  startRun(
    input: string,
    options: RunOptions & { history?: ChatMessage[]; wait?: boolean } = {},
  ): Promise<RunStarted | RunFinished> {
    return this.runCalls.startRun(input, options);
  }

  /**
   * Start a run and stream its events from its first one until its `agent_end`: the run is started, the
   * session_sequence of its first event read from its event page, and the WebSocket opened just before it,
   * so no event of the run is missed however fast it is. The stream reconnects by itself (see SocketEventStream).
   */
  stream(prompt: string, history?: ChatMessage[], options: StreamOptions = {}): Promise<EventStream> {
    return this.runCalls.stream(prompt, history, options);
  }

  /** The session's events from a cursor: followed live over the WebSocket (default), or the retained ones page by page (`follow: false`). */
  events(options: EventsOptions = {}): EventStream {
    return this.runCalls.events(options);
  }

  /** The transcript's messages. */
  async history(): Promise<ChatMessage[]> {
    return (await this.ctx.transport.get<{ messages: ChatMessage[] }>(this.path('/history'))).messages;
  }

  /** Cancel the active run: false when nothing runs. */
  async cancel(): Promise<boolean> {
    return (await this.ctx.transport.post<{ cancelled: boolean }>(this.path('/cancel'))).cancelled;
  }

  /** The seed's non-blocking cancel (the same call here). */
  cancelAsync(): Promise<boolean> {
    return this.cancel();
  }

  /**
   * Cancel the active run and wait until the session is idle again (the seed's cancelAndSettle): true once it
   * settled, false when nothing ran or it was still busy after `graceMs + abortGraceMs` (the server's run stops at
   * its next safe point; the client cannot abort it harder).
   */
  cancelAndSettle(graceMs = 2000, abortGraceMs = 1000): Promise<boolean> {
    return this.runCalls.cancelAndSettle(graceMs, abortGraceMs);
  }

  /** Cancel a run if it is the active one: false when it is not. */
  async cancelRun(runId: string): Promise<boolean> {
    return (await this.ctx.transport.post<{ cancelled: boolean }>(this.path(`/runs/${seg(runId)}/cancel`))).cancelled;
  }

  /** Run records, oldest first. */
  async runs(): Promise<RunRecord[]> {
    return (await this.ctx.transport.get<{ runs: RunRecord[] }>(this.path('/runs'))).runs;
  }

  /** One run record. */
  async runSnapshot(runId: string): Promise<RunRecord> {
    return (await this.ctx.transport.get<{ run: RunRecord }>(this.path(`/runs/${seg(runId)}`))).run;
  }

  /**
   * A page of a run's events (per-run `sequence` > after) with the seed's fields (`hasMore`,
   * `latestSequenceExclusive`, `firstAvailableSequence`, `nextAfterSequence`): the seed's positional
   * `runEventPage(runId, afterSequence?, limit?)`, or `{after, limit}`.
   */
  runEventPage(
    runId: string,
    afterOrOptions: number | null | { after?: number; limit?: number } = {},
    limit?: number,
  ): Promise<RunEventsPage> {
    return this.runCalls.runEventPage(runId, afterOrOptions, limit);
  }

  /** Every retained event of a run, page after page (`limit` bounds the total). */
  runEvents(runId: string, options: { after?: number; limit?: number } = {}): Promise<EventEnvelope[]> {
    return this.runCalls.runEvents(runId, options);
  }

  /** The active run `{id, status}`, null when idle. */
  async currentRun(): Promise<{ id: string; status: RunStatus } | null> {
    return (await this.info()).currentRun;
  }

  /** Resume a run from its loop checkpoint: the new run (202), or with `{wait: true}` its AgentResult. */
  resumeRun(runId: string, options?: RunOptions & { wait?: false }): Promise<RunStarted>;
  resumeRun(runId: string, options: RunOptions & { wait: true }): Promise<AgentResult | null>;
  resumeRun(runId: string, options: RunOptions & { wait?: boolean } = {}): Promise<RunStarted | AgentResult | null> {
    return this.runCalls.resumeRun(runId, options);
  }

  /** The session's trace events (its retained event log) after a session_sequence. */
  async traceEvents(options: { after?: number; limit?: number } = {}): Promise<EventEnvelope[]> {
    return (
      await this.ctx.transport.get<{ events: EventEnvelope[] }>(this.path('/trace'), {
        after: options.after,
        limit: options.limit,
      })
    ).events;
  }

  /** Compact the conversation now (the seed's /compact). */
  compact(): Promise<CompactResponse> {
    return this.ctx.transport.post<CompactResponse>(this.path('/compact'));
  }

  // Lifecycle

  /** The session's info now. */
  async info(): Promise<SessionInfo> {
    return (await this.ctx.transport.get<{ session: SessionInfo }>(this.path())).session;
  }

  /** Save one snapshot generation; answers its number. */
  async save(): Promise<number> {
    return (await this.ctx.transport.post<{ generation: number }>(this.path('/save'))).generation;
  }

  /** True once this handle closed the session, or when it was closed as this handle was made (`info().closed` asks the server). */
  isClosed(): boolean {
    return this.closedHere;
  }

  /** The seed's non-blocking close (the same call here). */
  closeAsync(): Promise<boolean> {
    return this.close();
  }

  /** Close the session (and this client's host socket): true when it was open, false when already closed or unknown. */
  async close(): Promise<boolean> {
    this.host.disconnect();
    this.closedHere = true;
    const answer = await falseOn(['SESSION_NOT_FOUND'], () =>
      this.ctx.transport.delete<{ closed: boolean }>(this.path()),
    );
    return answer !== false && answer.closed;
  }

  // Callbacks: the client as the session's WebSocket host (SessionHost)

  /** Register a hook with a JS handler. */
  registerHook: SessionHost['registerHook'] = (id, event, matcher, options, handler) =>
    this.host.registerHook(id, event, matcher, options, handler);
  /** Remove a hook (boolean). */
  unregisterHook: SessionHost['unregisterHook'] = (id) => this.host.unregisterHook(id);
  /** Registered hooks. */
  hooks: SessionHost['hooksList'] = () => this.host.hooksList();
  /** Number of hooks of the session. */
  hookCount = async (): Promise<number> => (await this.host.hooksList()).length;
  /** Register a slash command (JS handler, template or webhook). */
  registerCommand: SessionHost['registerCommand'] = (name, description, handler, options) =>
    this.host.registerCommand(name, description, handler, options);
  /** Remove a command (boolean). */
  unregisterCommand: SessionHost['unregisterCommand'] = (name) => this.host.unregisterCommand(name);
  /** Slash commands. */
  listCommands: SessionHost['listCommands'] = () => this.host.listCommands();
  /** Set (or with null remove) the JS budget guard. */
  setBudgetGuard: SessionHost['setBudgetGuard'] = (guard) => this.host.setBudgetGuard(guard);
  /** Close this client's host socket (registrations naming it then fail closed on the server). */
  disconnectHost = (): void => this.host.disconnect();
}

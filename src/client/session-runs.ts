import type { RunWebhook } from '../protocol/webhooks.js';
import type { z } from 'zod';
import type { ChatMessage } from '../protocol/chat-message.js';
import type { EventEnvelope } from '../protocol/event-envelope.js';
import type {
  RunEventsResponseSchema,
  RunFinishedResponseSchema,
  RunStartedResponseSchema,
  SessionInfoSchema,
} from '../protocol/http.js';
import type { RunAttachment } from '../protocol/attachments.js';
import type { MultitaskStrategy } from '../protocol/multitask-strategy.js';
import type { AgentResult } from '../protocol/run-record.js';
import { toA3sError } from './a3s-error.js';
import type { EventStream } from './event-stream.js';
import { seg } from './http-transport.js';
import { PagedEventStream } from './paged-event-stream.js';
import { prepareRunAttachments, type AttachmentInput } from './session-attachments.js';
import { requireWebSocket, sessionPath, type SessionContext } from './session-context.js';
import {
  SocketEventStream,
  type ReconnectOptions,
  type ReplayGap,
  type SocketEventStreamOptions,
} from './socket-event-stream.js';

/** Answer of a started run (202). */
export type RunStarted = z.infer<typeof RunStartedResponseSchema>;
/** Answer of a finished run (`wait: true`). */
export type RunFinished = z.infer<typeof RunFinishedResponseSchema>;
/** A page of run events. */
export type RunEventsPage = z.infer<typeof RunEventsResponseSchema>;

/** Options of a run start. */
export interface RunOptions {
  /** Sent as `Idempotency-Key`: a retried start with the same key returns the existing run. */
  idempotencyKey?: string;
  /**
   * What the run does while another is active: `reject` (the server's default: SessionBusyError), `enqueue`
   * (wait in the session's run queue), `interrupt` or `rollback` (docs/runs.md). Not for side questions.
   */
  multitaskStrategy?: MultitaskStrategy;
  /** POST the run record to this URL when the run ends (and on `events`), signed (docs/webhooks.md). */
  webhook?: RunWebhook;
}

/** Options of an event stream. */
export interface StreamOptions extends RunOptions {
  reconnect?: ReconnectOptions;
  /** Called for each replay gap (also delivered as a `replay_gap` AgentEvent). */
  onReplayGap?: (gap: ReplayGap) => void;
  /** Called before each reconnect with the close code of the socket that went away. */
  onReconnect?: SocketEventStreamOptions['onReconnect'];
}

/** Options of `session.events()`. */
export interface EventsOptions extends StreamOptions {
  /** Events with session_sequence > after (default: live events only when following, 0 otherwise). */
  after?: number;
  /** Follow live events over the WebSocket (default true); false: read the retained events page by page, then end. */
  follow?: boolean;
  /** Only this run's events. */
  runId?: string;
}

/** Run options with the run's attachments (already converted to run parts). */
type WithAttachments<T> = T & { attachments?: RunAttachment[] };

/** How long stream() looks for the first event of the run it started (it is emitted as the run starts). */
const FIRST_EVENT_TIMEOUT_MS = 10_000;

/** The bodies of a Session's run and event-stream methods (start, send, stream, events, run event pages, resume). */
export class SessionRuns {
  constructor(private readonly ctx: SessionContext) {}

  private path(suffix = ''): string {
    return sessionPath(this.ctx, suffix);
  }

  /** Run a prompt to its end and answer the AgentResult; a failed or cancelled run rejects with its run error. */
  async send(prompt: string, history?: ChatMessage[], options: WithAttachments<RunOptions> = {}): Promise<AgentResult> {
    const finished = (await this.startRun(prompt, { history, wait: true, ...options })) as RunFinished;
    const { run, result } = finished;
    if (run.status !== 'completed' || result === null) {
      const code = run.error?.code ?? (run.status === 'cancelled' ? 'CANCELLED' : 'INTERNAL_ERROR');
      throw toA3sError(code, run.error?.message ?? `run ${run.runId} ended ${run.status}`, 0, {
        runId: run.runId,
        status: run.status,
        run,
        result,
      });
    }
    return result;
  }

  /** POST .../runs as is: 202 RunStarted, or with `wait: true` the RunFinished answer (a failed run resolves too). */
  async startRun(
    input: string,
    options: WithAttachments<RunOptions> & { history?: ChatMessage[]; wait?: boolean } = {},
  ): Promise<RunStarted | RunFinished> {
    const body = {
      input,
      ...(options.attachments !== undefined && options.attachments.length > 0
        ? { attachments: options.attachments }
        : {}),
      ...(options.history !== undefined ? { history: options.history } : {}),
      ...(options.wait ? { wait: true } : {}),
      ...(options.multitaskStrategy !== undefined ? { multitaskStrategy: options.multitaskStrategy } : {}),
      ...(options.webhook !== undefined ? { webhook: options.webhook } : {}),
    };
    const headers: Record<string, string> =
      options.idempotencyKey !== undefined ? { 'idempotency-key': options.idempotencyKey } : {};
    return (await this.ctx.transport.request<RunStarted | RunFinished>('POST', this.path('/runs'), { body, headers }))
      .body;
  }

  /** Start a run and stream its events from its first one until its `agent_end` (the socket opened just before it). */
  async stream(
    prompt: string,
    history?: ChatMessage[],
    options: WithAttachments<StreamOptions> = {},
  ): Promise<EventStream> {
    const WebSocket = await requireWebSocket(this.ctx);
    const started = await this.startRun(prompt, { history, ...options });
    const runId = started.runId;
    const first = await this.firstSessionSequence(runId);
    return new SocketEventStream({
      baseUrl: this.ctx.transport.baseUrl,
      token: this.ctx.transport.token,
      WebSocket,
      sessionId: this.ctx.sessionId,
      after: first - 1,
      runId,
      untilRunEnd: true,
      settle: () => this.released(runId),
      reconnect: options.reconnect,
      onReplayGap: options.onReplayGap,
      onReconnect: options.onReconnect,
    });
  }

  /** The session's events from a cursor: followed live over the WebSocket (default), or the retained ones page by page (`follow: false`). */
  events(options: EventsOptions = {}): EventStream {
    if (options.follow === false)
      return new PagedEventStream(this.ctx.transport, this.ctx.sessionId, options.after ?? 0, options.runId);
    return new SocketEventStream({
      baseUrl: this.ctx.transport.baseUrl,
      token: this.ctx.transport.token,
      WebSocket: requireWebSocket(this.ctx),
      sessionId: this.ctx.sessionId,
      after: options.after,
      runId: options.runId,
      reconnect: options.reconnect,
      onReplayGap: options.onReplayGap,
      onReconnect: options.onReconnect,
    });
  }

  private async firstSessionSequence(runId: string): Promise<number> {
    const until = Date.now() + FIRST_EVENT_TIMEOUT_MS;
    for (let delay = 5; ; delay = Math.min(100, delay * 2)) {
      const page = await this.runEventPage(runId, { after: -1, limit: 1 });
      const first = page.events[0];
      if (first) return first.metadata.session_sequence;
      if (Date.now() > until)
        throw toA3sError('PROTOCOL_ERROR', `run ${runId} emitted no event within ${FIRST_EVENT_TIMEOUT_MS} ms`, 0, {
          runId,
        });
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  /** Resolve once the run no longer holds the session (its producer has finished), or after a bound. */
  private async released(runId: string): Promise<void> {
    const until = Date.now() + FIRST_EVENT_TIMEOUT_MS;
    for (let delay = 5; Date.now() < until; delay = Math.min(100, delay * 2)) {
      const current = await this.currentRun();
      if (current?.id !== runId) return;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  /** The active run `{id, status}` from the session's info, null when idle. */
  private async currentRun(): Promise<z.infer<typeof SessionInfoSchema>['currentRun']> {
    return (await this.ctx.transport.get<{ session: z.infer<typeof SessionInfoSchema> }>(this.path())).session
      .currentRun;
  }

  /** The seed's object form of send: `{prompt, history?, attachments?}`. */
  async sendRequest(request: SessionRequest, options: RunOptions = {}): Promise<AgentResult> {
    return this.send(request.prompt, request.history ?? undefined, {
      ...options,
      attachments: await prepareRunAttachments(this.ctx, request.attachments ?? []),
    });
  }

  /** The seed's object form of stream: `{prompt, history?, attachments?}`. */
  async streamRequest(request: SessionRequest, options: StreamOptions = {}): Promise<EventStream> {
    return this.stream(request.prompt, request.history ?? undefined, {
      ...options,
      attachments: await prepareRunAttachments(this.ctx, request.attachments ?? []),
    });
  }

  /**
   * The seed's sendWithAttachments: send with images and text files and answer the AgentResult, like send. An
   * attachment is the seed's `{data, mediaType}` (an image; with `name`, a text file), the server's run
   * part `{type, mediaType, name?, data | attachmentId}`, or a reference uploadAttachment answered. Bytes up to
   * 512 KiB travel base64 in the JSON body; larger ones are uploaded first and sent as references.
   */
  async sendWithAttachments(
    prompt: string,
    attachments: readonly AttachmentInput[],
    history?: ChatMessage[] | null,
    options: RunOptions = {},
  ): Promise<AgentResult> {
    return this.send(prompt, history ?? undefined, {
      ...options,
      attachments: await prepareRunAttachments(this.ctx, attachments),
    });
  }

  /** The seed's streamWithAttachments: stream with images and text files (see AttachmentInput). */
  async streamWithAttachments(
    prompt: string,
    attachments: readonly AttachmentInput[],
    history?: ChatMessage[] | null,
    options: StreamOptions = {},
  ): Promise<EventStream> {
    return this.stream(prompt, history ?? undefined, {
      ...options,
      attachments: await prepareRunAttachments(this.ctx, attachments),
    });
  }

  /**
   * Cancel the active run and wait until the session is idle again (the seed's cancelAndSettle): true once it
   * settled, false when nothing ran or it was still busy after `graceMs + abortGraceMs` (the server's run stops at
   * its next safe point; the client cannot abort it harder).
   */
  async cancelAndSettle(graceMs: number, abortGraceMs: number): Promise<boolean> {
    if (!(await this.ctx.transport.post<{ cancelled: boolean }>(this.path('/cancel'))).cancelled) return false;
    const deadline = Date.now() + graceMs + abortGraceMs;
    for (;;) {
      if ((await this.currentRun()) === null) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** A page of a run's events (per-run `sequence` > after). */
  runEventPage(
    runId: string,
    afterOrOptions: number | null | { after?: number; limit?: number } = {},
    limit?: number,
  ): Promise<RunEventsPage> {
    const options =
      typeof afterOrOptions === 'object' && afterOrOptions !== null
        ? afterOrOptions
        : { ...(afterOrOptions !== null ? { after: afterOrOptions } : {}), ...(limit !== undefined ? { limit } : {}) };
    return this.ctx.transport.get<RunEventsPage>(this.path(`/runs/${seg(runId)}/events`), {
      after: options.after,
      limit: options.limit,
    });
  }

  /** Every retained event of a run, page after page (`limit` bounds the total). */
  async runEvents(runId: string, options: { after?: number; limit?: number } = {}): Promise<EventEnvelope[]> {
    const all: EventEnvelope[] = [];
    const max = options.limit ?? Number.POSITIVE_INFINITY;
    for (let after = options.after ?? -1; all.length < max;) {
      const page = await this.runEventPage(runId, { after, limit: Math.min(1000, max - all.length) });
      all.push(...page.events);
      if (page.events.length === 0 || page.nextAfter === null) break;
      after = page.nextAfter;
    }
    return all;
  }

  /** Resume a run from its loop checkpoint: the new run (202), or with `{wait: true}` its AgentResult. */
  async resumeRun(
    runId: string,
    options: RunOptions & { wait?: boolean } = {},
  ): Promise<RunStarted | AgentResult | null> {
    const headers: Record<string, string> =
      options.idempotencyKey !== undefined ? { 'idempotency-key': options.idempotencyKey } : {};
    const { body } = await this.ctx.transport.request<RunStarted | RunFinished>(
      'POST',
      this.path(`/runs/${seg(runId)}/resume`),
      {
        // A strategy is sent so the server refuses it by name (a resume takes none), never dropped here.
        body: {
          ...(options.wait ? { wait: true } : {}),
          ...(options.multitaskStrategy !== undefined ? { multitaskStrategy: options.multitaskStrategy } : {}),
          // Likewise a webhook: a resumed run delivers to its origin's, so the server refuses one here by name.
          ...(options.webhook !== undefined ? { webhook: options.webhook } : {}),
        },
        headers,
      },
    );
    return options.wait ? (body as RunFinished).result : (body as RunStarted);
  }
}

/** The seed's SessionRequestOptions: a prompt, an optional history and optional attachments. */
export interface SessionRequest {
  prompt: string;
  history?: ChatMessage[] | null;
  attachments?: readonly AttachmentInput[] | null;
}

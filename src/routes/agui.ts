import type { TraceParent } from '../runtime/ports/telemetry.js';
import { traceOf } from '../server/request-traces.js';
import { EventType, type RunAgentInput } from '@ag-ui/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RuntimeContext } from '../context.js';
import { CodeError } from '../errors.js';
import {
  AguiCapabilitiesSchema,
  AguiConnectInputSchema,
  AguiEventSchema,
  AguiParamsSchema,
  AguiQuerySchema,
  AguiRunAgentInputSchema,
} from '../protocol/agui.js';
import { ErrorBodySchema } from '../protocol/http.js';
import { addressedCaller } from '../runtime/live-sessions/session-address.js';
import { hasScope, type Caller } from '../runtime/ports/caller.js';
import type { AgentSession } from '../runtime/session-kernel/agent-session.js';
import { addRoute, ensureLocalOrForward } from '../server/route.js';
import type { SocketRegistry } from '../server/socket-registry.js';
import { aguiCapabilities } from '../interop/agui/agui-capabilities.js';
import { AguiEventMapper, type AguiRunIds } from '../interop/agui/agui-event-mapper.js';
import { AguiInterruptLedger } from '../interop/agui/agui-interrupt-ledger.js';
import { toAguiMessages } from '../interop/agui/agui-messages.js';
import { parseRunAgentInput, resumeDecisions } from '../interop/agui/agui-run-input.js';
import { aguiMultitaskStrategy, aguiUserInput } from '../interop/agui/agui-user-input.js';
import { AguiSseStream } from '../interop/agui/agui-sse-stream.js';
import { followAguiRun } from '../interop/agui/follow-agui-run.js';

const STREAM_ERRORS = {
  400: ErrorBodySchema,
  401: ErrorBodySchema,
  403: ErrorBodySchema,
  404: ErrorBodySchema,
  409: ErrorBodySchema,
  410: ErrorBodySchema,
  413: ErrorBodySchema,
  421: ErrorBodySchema,
  503: ErrorBodySchema,
};

/** AG-UI over HTTP: POST /v1/agui/:sessionId (RunAgentInput in, SSE of AG-UI events out), .../connect, GET /v1/agui/capabilities. */
export function registerAguiRoutes(app: FastifyInstance, ctx: RuntimeContext, _sockets: SocketRegistry): void {
  const { agent } = ctx;
  const ledger = new AguiInterruptLedger();
  const open = new Set<AguiSseStream>();
  // Streams end before the HTTP server waits for its requests: drained runs have ended them already, this is the net.
  app.addHook('preClose', async () => {
    for (const stream of [...open]) stream.close();
  });

  /**
   * The session `:sessionId` names for this caller (hydrated here when stored), open; 404 for another tenant's.
   * Undefined when another node owns it: the request was forwarded there and its answer streamed back.
   */
  const sessionFor = async (
    request: FastifyRequest,
    reply: FastifyReply,
    sessionId: string,
    caller: Caller,
    tenantId: string | undefined,
    startsRun: boolean,
  ): Promise<AgentSession | undefined> => {
    const who = addressedCaller(caller, tenantId);
    if (await ensureLocalOrForward(ctx, request, reply, () => agent.ensureLocal(sessionId, who, startsRun)))
      return undefined;
    const session = agent.getSession(sessionId, who);
    session.lifecycle.assertOpen();
    return session;
  };

  const openStream = (reply: FastifyReply): AguiSseStream => {
    const stream = new AguiSseStream(reply);
    open.add(stream);
    stream.onClose(() => open.delete(stream));
    return stream;
  };

  const mapperFor = (session: AgentSession, ids: AguiRunIds): AguiEventMapper =>
    new AguiEventMapper(ids, {
      pendingOfRun: () => session.governance.pendingConfirmations().filter((p) => p.runId === ids.a3sRunId),
      questionsOfRun: () => session.governance.pendingQuestions().filter((q) => q.runId === ids.a3sRunId),
      now: () => ctx.hostEnv.now(),
    });

  /**
   * Admit the run of a RunAgentInput: its media parts checked and stored as run attachments first (the
   * server's attachment checks, naming the message part), removed again when admission fails.
   */
  const admit = async (session: AgentSession, input: RunAgentInput, trace: TraceParent | undefined) => {
    const user = aguiUserInput(input);
    const strategy = aguiMultitaskStrategy(input);
    const maxBytes = ctx.config.limits.maxInputBytes;
    const bytes = Buffer.byteLength(user.text, 'utf8');
    if (bytes > maxBytes)
      throw new CodeError(
        'PAYLOAD_TOO_LARGE',
        `${user.field}: ${bytes} bytes exceed limits.maxInputBytes (${maxBytes} UTF-8 bytes)`,
        { field: user.field, limit: 'limits.maxInputBytes', maxBytes, bytes },
      );
    const existing = session.runs.forIdempotencyKey(input.runId);
    if (existing) return existing;
    if (!agent.admitting) throw new CodeError('SHUTTING_DOWN', 'the server is shutting down and admits no new runs');
    const model = session.config.model;
    const { refs, created } =
      user.attachments.length > 0
        ? await ctx.attachments.resolveRun(
            session.key,
            user.attachments,
            { id: model.id, acceptsImages: model.acceptsImages === true },
            user.attachmentFields,
          )
        : { refs: [], created: [] };
    try {
      return session.runs.start({
        input: user.text,
        idempotencyKey: input.runId,
        ...(refs.length > 0 ? { attachments: refs } : {}),
        ...(strategy !== undefined ? { multitaskStrategy: strategy } : {}),
        ...(trace !== undefined ? { traceParent: trace } : {}),
      });
    } catch (error) {
      await ctx.attachments.forget(session.key, created);
      throw error;
    }
  };

  /** A new run (or, for a runId seen before, the same run replayed from its first event). */
  const startStream = async (session: AgentSession, input: RunAgentInput, reply: FastifyReply) => {
    const before = session.events.lastSequence;
    const handle = await admit(session, input, traceOf(reply.request));
    // A queued run is announced once it is durable (as POST .../runs answers 202): a node lost after RUN_STARTED
    // does not lose it.
    await handle.saved;
    const a3sRunId = handle.record.runId;
    // A retried POST replays the run from its first retained event.
    const first = handle.existing
      ? session.events.runPage(a3sRunId, -1, 1)?.events[0]?.metadata.session_sequence
      : undefined;
    const after = handle.existing ? (first !== undefined ? first - 1 : session.events.lastSequence) : before;
    const mapper = mapperFor(session, { threadId: session.id, runId: input.runId, a3sRunId });
    const stream = openStream(reply);
    const queued = handle.queuePosition !== undefined ? { queuePosition: handle.queuePosition } : {};
    stream.write(mapper.start({ a3sSessionId: session.id, existing: handle.existing, ...queued }));
    followAguiRun({ session, mapper, stream, after, done: handle.done });
    return reply;
  };

  /** Answer interrupts, then stream the rest of the run they paused; a stale or unknown one is RUN_ERROR. */
  const resumeStream = (
    session: AgentSession,
    input: RunAgentInput,
    reply: FastifyReply,
    mayPassFloor: boolean,
  ): FastifyReply => {
    const decisions = resumeDecisions(input);
    const stream = openStream(reply);
    const point = ledger.resume(session, decisions, mayPassFloor);
    if (point instanceof CodeError) {
      const mapper = mapperFor(session, { threadId: session.id, runId: input.runId, a3sRunId: '' });
      stream.write(mapper.error(point.message, point.code));
      stream.close();
      return reply;
    }
    const mapper = mapperFor(session, { threadId: session.id, runId: input.runId, a3sRunId: point.a3sRunId });
    for (const event of point.seed) mapper.seed(event);
    stream.write(mapper.start({ a3sSessionId: session.id, resumed: decisions.map((d) => d.interruptId) }));
    const done = session.runs.list().find((r) => r.runId === point.a3sRunId)?.idempotencyKey;
    followAguiRun({
      session,
      mapper,
      stream,
      after: point.after,
      done: done !== undefined ? session.runs.forIdempotencyKey(done)?.done : undefined,
    });
    return reply;
  };

  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/agui/:sessionId',
      summary: 'AG-UI: run the session on a RunAgentInput and stream AG-UI events (SSE)',
      description:
        'The AG-UI thread is the session (`threadId` must equal `:sessionId`). The last message must be a user message: it becomes the run input (the session keeps its own transcript; earlier messages, tools, context and state are not read). Its image and document parts (source {type: "data", value, mimeType} or {type: "file", value: attachmentId}) become run attachments: image/* images, text/* files, checked like POST .../runs attachments (400 naming the part); remote URLs, audio and video are refused. `forwardedProps.multitaskStrategy` (reject, enqueue, interrupt, rollback) says what happens while the session is busy. ' +
        "`runId` is the run's Idempotency-Key: a retried POST with the same runId replays that run's stream instead of starting another. Every event carries metadata.runId (the client's) and metadata.a3sRunId (ours). " +
        'A pending confirmation ends the stream with RUN_FINISHED {outcome: {type: "interrupt", interrupts: [{id, reason: "tool_call", toolCallId}]}}; a RunAgentInput with `resume: [{interruptId, status: "resolved", payload: {approved, reason?, always?}}]` (or status "cancelled": a rejection) answers it and streams the rest of that run. A question of the agent (ask_user) ends the stream the same way with an interrupt {reason: "user_question", message: the question, metadata: {options, allowFreeText}}, answered by `resume: [{interruptId, status: "resolved", payload: {answer} | {option} | {declined: true}}]` (status "cancelled" declines it). A stale or unknown interrupt is RUN_ERROR (CONFIRMATION_SETTLED / QUESTION_SETTLED / CONFIRMATION_NOT_FOUND). ' +
        "Errors before the stream starts answer in the error shape: 400 naming the field, 404 for another tenant's session, 409 SESSION_BUSY while another run is active (multitaskStrategy reject).",
      scope: 'sessions',
      params: AguiParamsSchema,
      query: AguiQuerySchema,
      documentedBody: AguiRunAgentInputSchema,
      produces: 'text/event-stream',
      responses: { 200: AguiEventSchema, ...STREAM_ERRORS },
    },
    async ({ params, query, caller, request, reply }) => {
      const input = parseRunAgentInput(request.body, params.sessionId);
      const session = await sessionFor(
        request,
        reply,
        params.sessionId,
        caller,
        query.tenantId,
        input.resume === undefined,
      );
      if (!session) return reply;
      return input.resume !== undefined
        ? resumeStream(session, input, reply, hasScope(caller, 'host_direct'))
        : startStream(session, input, reply);
    },
  );

  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/agui/:sessionId/connect',
      summary: "AG-UI: the session's messages (MESSAGES_SNAPSHOT) and its pending interrupts, as a short SSE stream",
      description:
        'RUN_STARTED, MESSAGES_SNAPSHOT (the transcript without system messages), then RUN_FINISHED: with an interrupt outcome when the active run waits for confirmations, else success. The body is empty or a RunAgentInput (its threadId, when given, must equal `:sessionId`; its runId is echoed).',
      scope: 'sessions',
      params: AguiParamsSchema,
      query: AguiQuerySchema,
      documentedBody: AguiConnectInputSchema,
      produces: 'text/event-stream',
      responses: { 200: AguiEventSchema, ...STREAM_ERRORS },
    },
    async ({ params, query, caller, request, reply }) => {
      const body = request.body;
      const empty =
        body === undefined ||
        body === null ||
        (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0);
      const input = empty ? undefined : parseRunAgentInput(body, params.sessionId);
      const session = await sessionFor(request, reply, params.sessionId, caller, query.tenantId, false);
      if (!session) return reply;
      const runId = input?.runId ?? ctx.hostEnv.newId('agui');
      const active = session.runs.activeRunId;
      const mapper = mapperFor(session, { threadId: session.id, runId, a3sRunId: active ?? '' });
      const stream = openStream(reply);
      stream.write(mapper.start({ a3sSessionId: session.id, ...(active ? { activeRun: active } : {}) }));
      const snapshot = {
        type: EventType.MESSAGES_SNAPSHOT,
        messages: toAguiMessages(session.transcript.history()),
        timestamp: ctx.hostEnv.now(),
        metadata: { runId },
      } as const;
      stream.write([snapshot]);
      const waiting = active ? mapper.waiting() : [];
      const closing = waiting.length > 0 ? waiting : mapper.ended('completed', '', undefined);
      stream.write(closing);
      stream.close();
      return reply;
    },
  );

  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/agui/capabilities',
      summary: 'AG-UI AgentCapabilities of this server',
      scope: 'sessions',
      responses: { 200: AguiCapabilitiesSchema },
    },
    async () => aguiCapabilities(ctx.sandbox.kind !== 'none'),
  );
}

import { agent, PROTOCOL_VERSION, RequestError, type AgentApp, type SessionModeState } from '@agentclientprotocol/sdk';
import { packageVersion } from '../../package-version.js';
import type { RuntimeContext } from '../../context.js';
import { CodeError } from '../../errors.js';
import { formatZodIssues, zodFieldIssues } from '../../protocol/format-zod-issues.js';
import { ConfirmationPolicySchema, type ConfirmationPolicy } from '../../protocol/governance.js';
import { SessionOptionsSchema, type SessionOptions } from '../../protocol/session-options.js';
import type { Caller } from '../../runtime/ports/caller.js';
import type { AgentSession } from '../../runtime/session-kernel/agent-session.js';
import { acpHistoryUpdates } from './acp-history-updates.js';
import { acpMcpServers } from './acp-mcp-servers.js';
import type { AcpOwnerRelay } from './acp-owner-relay.js';
import { acpPromptInput } from './acp-prompt-input.js';
import { runAcpPrompt } from './acp-prompt.js';
import { steerAcpPrompt } from './acp-steer.js';
import { acpRequestError } from './acp-request-error.js';

/** Sessions per session/list page. */
export const ACP_LIST_PAGE = 100;

/** The mode (agent) a session runs as: its agent's name, or `general` for a session without one. */
function modeState(session: AgentSession): SessionModeState {
  const current = session.config.agentDefinition?.name ?? 'general';
  // Hidden workers are not offered to the editor (the session's own agent stays listed).
  const offered = session.config.agents.list().filter((a) => a.hidden !== true || a.name === current);
  return {
    currentModeId: current,
    availableModes: offered.map((a) => ({ id: a.name, name: a.name, description: a.description })),
  };
}

/**
 * The confirmation policy of an ACP session (the editor answers its asks): the operator's
 * `acp_confirmation_policy`, else the default confirmation policy with confirmation on.
 */
export function acpConfirmationPolicy(config: RuntimeContext['config']): ConfirmationPolicy {
  if (config.acpConfirmationPolicy) return config.acpConfirmationPolicy;
  return { ...(config.defaultConfirmationPolicy ?? ConfirmationPolicySchema.parse({})), enabled: true };
}

/** session/new params as SessionOptions, parsed by their schema: a bad field is VALIDATION_ERROR naming it (`cwd` for the workspace). */
function newSessionOptions(
  cwd: string,
  servers: ReturnType<typeof acpMcpServers>,
  confirmationPolicy: ConfirmationPolicy,
): SessionOptions {
  const parsed = SessionOptionsSchema.safeParse({
    workspace: cwd,
    ...(servers.length > 0 ? { mcpServers: servers } : {}),
    confirmationPolicy,
    // The editor answers the agent's questions (request_permission, elicitation): the session offers ask_user.
    askUser: true,
  });
  if (parsed.success) return parsed.data;
  // The workspace is ACP's `cwd`.
  const issues = parsed.error.issues.map((issue) =>
    issue.path[0] === 'workspace' ? { ...issue, path: ['cwd', ...issue.path.slice(1)] } : issue,
  );
  throw new CodeError('VALIDATION_ERROR', formatZodIssues(issues), {
    field: zodFieldIssues(issues, undefined, 1)[0]?.path ?? '(root)',
  });
}

/** Run a handler, turning our errors into JSON-RPC errors that carry our error shape. */
async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw acpRequestError(error);
  }
}

/**
 * The SDK's agent side for one authenticated connection: every method goes through the same Agent and
 * session kernel as REST (tenancy, workspace containment, single flight, governance). Editor-side
 * capabilities (fs/*, terminal/*) are never called: tools run in the server's workspace. A session another
 * node owns is served there through `relay` (same calls, same answers, updates passed through in order).
 */
export function createAcpAgent(ctx: RuntimeContext, caller: Caller, relay: AcpOwnerRelay): AgentApp {
  const sessions = ctx.agent;
  const open = async (sessionId: string, startsRun: boolean) => {
    await sessions.ensureLocal(sessionId, caller, startsRun);
    const session = sessions.getSession(sessionId, caller);
    session.lifecycle.assertOpen();
    return session;
  };
  let elicitsForms = false;
  const create = async (options: SessionOptions) => (await sessions.createSession(options, caller, 'params')).session;
  return agent({ name: 'a3s-code-server' })
    .onRequest('initialize', ({ params }) => {
      // An editor that takes form elicitations is asked free-text questions of ask_user that way.
      elicitsForms = params.clientCapabilities?.elicitation?.form != null;
      return {
        protocolVersion: PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: true, audio: false, embeddedContext: true },
          mcpCapabilities: { http: true, sse: true },
          sessionCapabilities: { list: {} },
        },
        agentInfo: { name: 'a3s-code-server', title: 'A3S Code', version: packageVersion() },
        authMethods: [],
      };
    })
    .onRequest('session/new', ({ params }) =>
      guarded(async () => {
        const session = await create(
          newSessionOptions(params.cwd, acpMcpServers(params.mcpServers), acpConfirmationPolicy(ctx.config)),
        );
        return { sessionId: session.id, modes: modeState(session) };
      }),
    )
    .onRequest('session/load', ({ params, client }) =>
      guarded(async () => {
        const found = await relay.locate(() => open(params.sessionId, false));
        if ('origin' in found) return relay.request(found.origin, client, 'session/load', params);
        const session = found.local;
        for (const update of acpHistoryUpdates(session.transcript.history()))
          await client.notify('session/update', { sessionId: session.id, update });
        return { modes: modeState(session) };
      }),
    )
    .onRequest('session/list', ({ params }) =>
      guarded(async () => {
        const offset = params.cursor ? Number.parseInt(params.cursor, 10) : 0;
        if (!Number.isSafeInteger(offset) || offset < 0)
          throw new CodeError('VALIDATION_ERROR', 'cursor: not a cursor of session/list', { field: 'cursor' });
        const all = sessions
          .listSessions(caller)
          .filter((s) => !s.lifecycle.isClosed && (params.cwd == null || s.workspace === params.cwd));
        const page = all.slice(offset, offset + ACP_LIST_PAGE);
        return {
          sessions: page.map((s) => ({ sessionId: s.id, cwd: s.workspace })),
          ...(offset + ACP_LIST_PAGE < all.length ? { nextCursor: String(offset + ACP_LIST_PAGE) } : {}),
        };
      }),
    )
    .onRequest('session/prompt', ({ params, client, signal }) =>
      guarded(async () => {
        if (!sessions.admitting)
          throw new CodeError('SHUTTING_DOWN', 'the server is shutting down and admits no new runs');
        const input = acpPromptInput(params.prompt, ctx.config.limits.maxInputBytes);
        const found = await relay.locate(() => open(params.sessionId, true));
        if ('origin' in found) return relay.request(found.origin, client, 'session/prompt', params, signal);
        const session = found.local;
        const active = session.runs.activeRunId;
        if (active !== undefined)
          return steerAcpPrompt(session, active, { input: input.text, images: input.attachments.length }, () =>
            runAcpPrompt(client, session, caller, { input: input.text, attachments: [], elicitsForms }, signal),
          );
        const model = session.config.model;
        const { refs, created } =
          input.attachments.length > 0
            ? await ctx.attachments.resolveRun(
                session.key,
                input.attachments,
                { id: model.id, acceptsImages: model.acceptsImages === true },
                input.fields,
              )
            : { refs: [], created: [] };
        return runAcpPrompt(
          client,
          session,
          caller,
          { input: input.text, attachments: refs, elicitsForms },
          signal,
          () => ctx.attachments.forget(session.key, created),
        );
      }),
    )
    .onNotification('session/cancel', async ({ params }) => {
      try {
        const found = await relay.locate(() => open(params.sessionId, false));
        if ('origin' in found) await relay.notify(found.origin, params);
        else found.local.runs.cancel();
      } catch {
        // A notification has no answer: an unknown or closed session has nothing to cancel.
      }
    })
    .onRequest('session/set_mode', ({ params, client }) =>
      guarded(async () => {
        const found = await relay.locate(() => open(params.sessionId, false));
        if ('origin' in found) return relay.request(found.origin, client, 'session/set_mode', params);
        const session = found.local;
        const current = modeState(session);
        if (current.currentModeId === params.modeId) return {};
        if (!current.availableModes.some((m) => m.id === params.modeId)) {
          throw new CodeError(
            'VALIDATION_ERROR',
            `modeId: no agent "${params.modeId}" (available: ${current.availableModes.map((m) => m.id).join(', ')})`,
            { field: 'modeId' },
          );
        }
        // An agent is part of a session's resolved configuration: it can change only before the first run.
        if (session.transcript.messages.length > 0 || session.runs.activeRunId !== undefined) {
          throw new RequestError(
            -32602,
            `modeId: the mode (agent) of session ${session.id} is fixed once it has run; start a new session for mode "${params.modeId}"`,
            {
              error: {
                code: 'SESSION_CONFIGURATION_ERROR',
                message: 'the agent of a session is fixed once it has run',
                details: { field: 'modeId' },
              },
            },
          );
        }
        const { agent: _previous, ...options } = session.config.options;
        await sessions.purgeSession(session.id, caller);
        const replaced = await create({
          ...options,
          sessionId: session.id,
          ...(params.modeId === 'general' ? {} : { agent: params.modeId }),
        });
        await client.notify('session/update', {
          sessionId: replaced.id,
          update: { sessionUpdate: 'current_mode_update', currentModeId: params.modeId },
        });
        return {};
      }),
    );
}

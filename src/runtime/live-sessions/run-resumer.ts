import { CodeError } from '../../errors.js';
import type { SessionOptions } from '../../protocol/session-options.js';
import { sessionIdOf, tenantIdOf, type SessionKey } from '../../stores/session-key.js';
import type { Caller } from '../ports/caller.js';
import type { TraceParent } from '../ports/telemetry.js';
import type { AgentSession } from '../session-kernel/agent-session.js';
import type { RunHandle } from '../session-kernel/run-handle.js';
import type { SessionServices } from '../session-kernel/session-services.js';
import type { LiveSessions } from './live-sessions.js';

/** What resuming a run needs from the agent. */
export interface RunResumerHost {
  readonly deps: SessionServices;
  readonly live: LiveSessions;
  /** Reopen a stored session (the agent's createSession with `resume: true`). */
  reopen(options: SessionOptions, caller: Caller): Promise<{ session: AgentSession; resumed: boolean }>;
}

/** Resumes a run from its loop checkpoint, hydrating its session first when it is not live here. */
export class RunResumer {
  constructor(private readonly host: RunResumerHost) {}

  /** Start a new run from the checkpoint of `runId` (see Agent.resumeRun for the errors). */
  async resume(
    key: SessionKey,
    runId: string,
    caller: Caller,
    idempotencyKey?: string,
    /** The span of the request that resumes it: linked from the resumed run's span (traces on). */
    traceParent?: TraceParent,
  ): Promise<{ session: AgentSession; handle: RunHandle }> {
    const { deps, live } = this.host;
    live.assertAdmitting();
    const sessionId = sessionIdOf(key);
    if (deps.checkpoints.kind === 'memory') {
      throw new CodeError(
        'SESSION_STORE_REQUIRED',
        'resume_run requires a session_store: this server keeps checkpoints in memory (use storage_backend "file" on one node, REDIS_URL across nodes)',
        { storageBackend: deps.config.storageBackend },
      );
    }
    let session = live.get(key);
    if (session) live.assertVisible(session, caller);
    else {
      // A closed session stays closed: only POST /v1/sessions with resume: true reopens it.
      live.closed.assertNotClosed(key, caller);
      const tenantId = tenantIdOf(key);
      session = (
        await this.host.reopen(
          { sessionId, resume: true, ...(tenantId === caller.tenantId ? {} : { tenantId }) },
          caller,
        )
      ).session;
    }
    // A retried resume answers with the run the first one started, even after that run consumed the checkpoint.
    const earlier = idempotencyKey !== undefined ? session.runs.forIdempotencyKey(idempotencyKey) : undefined;
    if (earlier) return { session, handle: earlier };
    if (session.config.sessionStore === 'memory') {
      throw new CodeError(
        'SESSION_STORE_REQUIRED',
        'resume_run requires a session_store: this session was created with sessionStore {type: "memory"}, so its checkpoints live in this process only',
        { sessionStore: 'memory' },
      );
    }
    if (session.runs.activeRunId === runId)
      throw new CodeError('SESSION_BUSY', `run ${runId} is still running on this node`, { activeRunId: runId });
    const checkpoint = await deps.checkpoints.load(session.key, runId);
    if (!checkpoint || checkpoint.session_id !== session.id) {
      throw new CodeError(
        'CHECKPOINT_NOT_FOUND',
        `no loop checkpoint found for run '${runId}' (session ${sessionId}): the run finished, never completed a tool round, or was lost`,
        { runId },
      );
    }
    return {
      session,
      handle: session.runs.start({
        input: checkpoint.input,
        resumeFrom: checkpoint,
        ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
        ...(traceParent !== undefined ? { traceParent } : {}),
      }),
    };
  }
}

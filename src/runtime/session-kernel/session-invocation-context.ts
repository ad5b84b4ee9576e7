import { createInvocationContext, type InvocationContext } from '../invocation/invocation-context.js';
import type { HostEnv } from '../ports/host-env.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import type { SessionEmit } from './session-emitter.js';

/** What an invocation context of a session is made of. */
export interface InvocationContextSource {
  readonly config: ResolvedSessionConfig;
  readonly hostEnv: HostEnv;
  readonly emit: SessionEmit;
}

/** An invocation context of the session; its events belong to `runId` (none for a host-direct call). */
export function sessionInvocationContext(
  source: InvocationContextSource,
  invocationId: string,
  signal: AbortSignal,
  runId: string | undefined,
): InvocationContext {
  const { config, hostEnv, emit } = source;
  return createInvocationContext({
    runId: invocationId,
    sessionId: config.sessionId,
    workspace: config.workspace,
    signal,
    emit: (type, payload) => emit(runId, type, payload),
    governance: config.governance,
    hostEnv,
  });
}

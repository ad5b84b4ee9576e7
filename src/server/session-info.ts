import type { z } from 'zod';
import type { SessionInfoSchema } from '../protocol/http.js';
import type { AgentSession } from '../runtime/session-kernel/agent-session.js';

/** The wire view of a session. */
export function sessionInfo(session: AgentSession): z.infer<typeof SessionInfoSchema> {
  const { config, transcript } = session;
  const reverted = transcript.reverted;
  return {
    id: session.id,
    workspace: config.workspace,
    model: config.model.id,
    busy: session.runs.activeRunId !== undefined,
    sandbox: session.sandbox.kind,
    sandboxNetwork: session.sandbox.network,
    currentRun: session.runs.current(),
    lastRun: session.runs.last(),
    initWarning: config.initWarning,
    ...(config.workspaceDir.changed ? { workspaceChanged: { ...config.workspaceDir.changed } } : {}),
    hasMemory: session.memory !== undefined,
    hasQueue: session.queue !== undefined,
    agent: config.agent,
    parentSessionId: config.parentSessionId,
    sessionStore: config.sessionStore,
    securityProvider: config.securityProvider,
    labels: config.labels,
    closed: session.lifecycle.isClosed,
    createdAtMs: session.createdAtMs,
    messageCount: transcript.messages.length,
    usage: transcript.totalUsage(),
    autoSave: config.autoSave,
    askUser: config.options.askUser === true && config.delegationDepth === 0,
    llmCalls: session.llm.callCount,
    ...(config.forkedFrom ? { forkedFrom: config.forkedFrom } : {}),
    // As POST .../unrevert checks it: the revert stands while the transcript ends where it cut it.
    ...(reverted && reverted.epoch === transcript.epoch && reverted.atMessage === transcript.messages.length
      ? { reverted: { runId: reverted.runId, runIds: [...reverted.runIds], hiddenMessages: reverted.messages.length } }
      : {}),
  };
}

import type { z } from 'zod';
import type { SessionInfoSchema } from '../protocol/http.js';
import type { AgentSession } from '../runtime/session-kernel/agent-session.js';

/** The wire view of a session. */
export function sessionInfo(session: AgentSession): z.infer<typeof SessionInfoSchema> {
  const { config } = session;
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
    messageCount: session.transcript.messages.length,
    usage: session.transcript.totalUsage(),
    autoSave: config.autoSave,
    askUser: config.options.askUser === true && config.delegationDepth === 0,
    llmCalls: session.llm.callCount,
    ...(config.forkedFrom ? { forkedFrom: config.forkedFrom } : {}),
  };
}

import type { z } from 'zod';
import type { SessionInfoSchema } from '../protocol/http.js';
import type { AgentSession } from '../runtime/session/agent-session.js';

/** The wire view of a session. */
export function sessionInfo(session: AgentSession): z.infer<typeof SessionInfoSchema> {
  const { config } = session;
  return {
    id: session.id,
    workspace: config.workspace,
    model: config.model.id,
    busy: session.activeRunId !== undefined,
    sandbox: session.sandbox.kind,
    sandboxNetwork: session.sandbox.network,
    currentRun: session.currentRun(),
    lastRun: session.lastRun(),
    initWarning: config.initWarning,
    ...(config.workspaceDir.changed ? { workspaceChanged: { ...config.workspaceDir.changed } } : {}),
    hasMemory: session.memory !== undefined,
    hasQueue: session.queue !== undefined,
    agent: config.agent,
    parentSessionId: config.parentSessionId,
    sessionStore: config.sessionStore,
    securityProvider: config.securityProvider,
    labels: config.labels,
    closed: session.isClosed,
    createdAtMs: session.createdAtMs,
    messageCount: session.history().length,
    usage: session.totalUsage(),
    autoSave: config.autoSave,
    llmCalls: session.llmCallCount,
  };
}

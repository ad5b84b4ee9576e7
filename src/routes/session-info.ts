import type { z } from 'zod';
import type { SessionInfoSchema } from '../protocol/http.js';
import type { AgentSession } from '../runtime/session/agent-session.js';

/** The wire view of a session. */
export function sessionInfo(session: AgentSession): z.infer<typeof SessionInfoSchema> {
  const active = session.activeRunId;
  return {
    id: session.id,
    workspace: session.config.workspace,
    model: session.config.model.id,
    busy: active !== undefined,
    currentRun: active ?? null,
    labels: session.config.labels,
    closed: session.isClosed,
    createdAtMs: session.createdAtMs,
    messageCount: session.history().length,
    usage: session.totalUsage(),
    autoSave: session.config.autoSave,
    llmCalls: session.llmCallCount,
  };
}

import { randomUUID } from 'node:crypto';
import type { PromptResponse } from '@agentclientprotocol/sdk';
import { CodeError } from '../../errors.js';
import { asAgentEventEnvelope } from '../../protocol/agent-event-envelope.js';
import type { AgentSession } from '../../runtime/session-kernel/agent-session.js';
import { acpStopReason } from './acp-prompt.js';

/** How long a steered run's end may take to settle after its agent_end (its autosave) before the answer. */
const SETTLE_MS = 30_000;

/**
 * A session/prompt sent while a run is active steers that run (run control): its text joins the transcript
 * at the run's next safe point, and this prompt is answered when the run ends, with the run's stop reason
 * and `_meta.a3s {steered: runId, requestId}`. When the run ended before a safe point (its last turn
 * answered without tools, so the steer was never applied) and completed, the prompt runs as a run of its
 * own (`rerun`); a cancelled run answers `cancelled`. Images cannot steer (a steer is text only).
 */
export async function steerAcpPrompt(
  session: AgentSession,
  runId: string,
  prompt: { input: string; images: number },
  rerun: () => Promise<PromptResponse>,
): Promise<PromptResponse> {
  if (prompt.images > 0)
    throw new CodeError(
      'VALIDATION_ERROR',
      'prompt: a prompt sent while a run is active steers that run, and a steer is text only; send the images once the run ended',
      { field: 'prompt' },
    );
  const requestId = `acp-steer-${randomUUID()}`;
  let applied = false;
  let unlisten: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => {
    unlisten = session.events.listen((envelope) => {
      const event = asAgentEventEnvelope(envelope);
      if (event.type === 'run_control_applied' && event.payload.request_id === requestId) applied = true;
      if ((event.type === 'agent_end' && event.metadata.run_id === runId) || event.type === 'session_closed') resolve();
    });
  });
  try {
    let receipt;
    try {
      receipt = session.runs.steer(runId, { input: prompt.input, requestId });
    } catch (error) {
      // The run ended meanwhile: this prompt is a run of its own.
      if (error instanceof CodeError && error.code === 'RUN_NOT_ACTIVE') return await rerun();
      throw error;
    }
    if (receipt.status === 'rejected')
      throw new CodeError(
        'SESSION_BUSY',
        `prompt: the session is busy and refused the steer: ${receipt.reason ?? 'no reason'}`,
        {
          field: 'prompt',
          runId,
        },
      );
    await ended;
    // agent_end precedes the producer's end: the record and the session are settled once the run let go.
    await session.runs.waitIdle(SETTLE_MS).catch(() => undefined);
    const record = session.runs.get(runId);
    if (!applied && record.status === 'completed') return await rerun();
    return { stopReason: acpStopReason(record), _meta: { a3s: { steered: runId, requestId, applied } } };
  } finally {
    unlisten();
  }
}

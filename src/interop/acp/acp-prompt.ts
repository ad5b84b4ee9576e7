import type { AgentContext, PromptResponse, StopReason } from '@agentclientprotocol/sdk';
import { asAgentEventEnvelope, type AgentEventEnvelope } from '../../protocol/agent-event-envelope.js';
import type { AttachmentRef } from '../../protocol/attachments.js';
import type { RunRecord } from '../../protocol/run-record.js';
import type { Caller } from '../../runtime/ports/caller.js';
import type { AgentSession } from '../../runtime/session-kernel/agent-session.js';
import { CodeError } from '../../errors.js';
import { askPermission } from './acp-permission.js';
import { askQuestion } from './acp-question.js';
import { AcpRunUpdates } from './acp-run-updates.js';

/** The ACP stop reason of a finished run; a failed run is a JSON-RPC error instead, except the loop's own limits. */
export function acpStopReason(record: RunRecord): StopReason {
  if (record.status === 'cancelled') return 'cancelled';
  if (record.status === 'failed') {
    const code = record.error?.code;
    if (code === 'MAX_TOOL_ROUNDS' || code === 'MAX_EXECUTION_TIME') return 'max_turn_requests';
    throw new CodeError(
      'INTERNAL_ERROR',
      `the run failed: ${code ?? 'INTERNAL_ERROR'}: ${record.error?.message ?? 'no message'}`,
      { runId: record.runId, code: code ?? 'INTERNAL_ERROR' },
    );
  }
  return 'end_turn';
}

/**
 * session/prompt: start a run (single flight: SESSION_BUSY while another runs) and stream its events as
 * session/update notifications, in event order, then answer with the stop reason once every update was
 * sent. A confirmation becomes a session/request_permission (askPermission); the editor's own cancel of the
 * request cancels the run.
 */
export async function runAcpPrompt(
  client: AgentContext,
  session: AgentSession,
  caller: Caller,
  /** `elicitsForms`: the editor declared clientCapabilities.elicitation.form (free-text questions go there). */
  prompt: { input: string; attachments: AttachmentRef[]; elicitsForms?: boolean },
  signal: AbortSignal,
  /** Removes the attachments this prompt stored, when the run is not admitted. */
  refused: () => Promise<void> = async () => undefined,
): Promise<PromptResponse> {
  const updates = new AcpRunUpdates();
  let runId: string | undefined;
  const early: AgentEventEnvelope[] = [];
  let sent: Promise<void> = Promise.resolve();
  const forward = (event: AgentEventEnvelope) => {
    for (const update of updates.map(event)) {
      sent = sent.then(() => client.notify('session/update', { sessionId: session.id, update })).catch(() => undefined);
    }
    // Asked once the updates before it (the tool call) are out; not awaited: other updates keep flowing.
    if (event.type === 'confirmation_required')
      sent = sent.then(() => void askPermission(client, session, caller, event));
    if (event.type === 'user_question')
      sent = sent.then(() => void askQuestion(client, session, event, prompt.elicitsForms === true));
  };
  const unlisten = session.events.listen((envelope) => {
    const event = asAgentEventEnvelope(envelope);
    if (runId === undefined) early.push(event);
    else if (event.metadata.run_id === runId) forward(event);
  });
  try {
    let handle;
    try {
      handle = session.runs.start({
        input: prompt.input,
        ...(prompt.attachments.length > 0 ? { attachments: prompt.attachments } : {}),
      });
    } catch (error) {
      await refused();
      throw error;
    }
    runId = handle.record.runId;
    for (const event of early.splice(0)) if (event.metadata.run_id === runId) forward(event);
    const onAbort = () => session.runs.cancelRun(handle.record.runId);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const record = await handle.done;
      await sent;
      return { stopReason: acpStopReason(record) };
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  } finally {
    unlisten();
  }
}

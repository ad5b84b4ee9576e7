import type { AgentContext, RequestPermissionResponse } from '@agentclientprotocol/sdk';
import { asAgentEventEnvelope, type KnownEvent } from '../../protocol/agent-event-envelope.js';
import type { AgentSession } from '../../runtime/session-kernel/agent-session.js';

/**
 * Ask the editor a question of the agent (ask_user) the only way ACP's stable methods allow: a question with
 * options becomes session/request_permission whose options are the choices (`option_<n>`, kind
 * allow_once), and the choice answers the question broker with that option. A question without options
 * (free text) is not sent: ACP has no free-text request here, so it waits for another client (REST, the
 * events WebSocket) or times out. A cancelled request leaves the question pending; the request is withdrawn
 * when the question is settled elsewhere first. Never throws.
 */
export async function askQuestion(
  client: AgentContext,
  session: AgentSession,
  event: KnownEvent<'user_question'>,
): Promise<void> {
  const { question_id: questionId, question, tool_call_id: toolCallId } = event.payload;
  const pending = session.governance.pendingQuestions().find((q) => q.questionId === questionId);
  if (!pending || pending.options.length === 0) return;
  const withdraw = new AbortController();
  const unwatch = session.events.listen((envelope) => {
    const later = asAgentEventEnvelope(envelope);
    if (later.type === 'tool_end' && later.payload.id === pending.toolCallId) withdraw.abort();
  });
  try {
    const answer = await client
      .request(
        'session/request_permission',
        {
          sessionId: session.id,
          toolCall: {
            toolCallId: toolCallId ?? pending.toolCallId,
            title: question,
            kind: 'other',
            status: 'pending',
            rawInput: { question, options: pending.options, allow_free_text: pending.allowFreeText },
          },
          options: pending.options.map((option, i) => ({ optionId: `option_${i}`, name: option, kind: 'allow_once' })),
          _meta: { questionId, timeoutMs: pending.timeoutMs, a3s: { kind: 'user_question' } },
        },
        { cancellationSignal: withdraw.signal, stopWaitingOnCancel: true },
      )
      .catch(() => undefined);
    const outcome = (answer as RequestPermissionResponse | undefined)?.outcome;
    if (withdraw.signal.aborted || outcome?.outcome !== 'selected') return;
    const index = /^option_(\d+)$/.exec(outcome.optionId)?.[1];
    const option = index !== undefined ? pending.options[Number(index)] : undefined;
    if (option === undefined) return;
    try {
      session.governance.answerQuestion(questionId, { option });
    } catch {
      // Settled elsewhere meanwhile, or the session closed: that outcome stands.
    }
  } finally {
    unwatch();
  }
}

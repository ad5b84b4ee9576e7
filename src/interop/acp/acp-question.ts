import type { AgentContext, RequestPermissionResponse } from '@agentclientprotocol/sdk';
import { asAgentEventEnvelope, type KnownEvent } from '../../protocol/agent-event-envelope.js';
import type { AgentSession } from '../../runtime/session-kernel/agent-session.js';

/**
 * Ask the editor a question of the agent (ask_user). An editor that declared
 * `clientCapabilities.elicitation.form` gets `elicitation/create` (form mode, one string field `answer`, an
 * enum of the options when free text is not allowed): an answer equal to an option answers with it, other
 * text answers as free text, and a `decline` declines the question. Otherwise a question with options becomes session/request_permission whose options are the choices (`option_<n>`, kind
 * allow_once), and the choice answers the question broker with that option. A question without options
 * (free text) is not sent to such an editor: session/request_permission offers only choices, so it waits for another client (REST, the
 * events WebSocket) or times out. A cancelled request leaves the question pending; the request is withdrawn
 * when the question is settled elsewhere first. Never throws.
 */
export async function askQuestion(
  client: AgentContext,
  session: AgentSession,
  event: KnownEvent<'user_question'>,
  elicitsForms: boolean,
): Promise<void> {
  const { question_id: questionId, question, tool_call_id: toolCallId } = event.payload;
  const pending = session.governance.pendingQuestions().find((q) => q.questionId === questionId);
  if (!pending || (pending.options.length === 0 && !elicitsForms)) return;
  const withdraw = new AbortController();
  const unwatch = session.events.listen((envelope) => {
    const later = asAgentEventEnvelope(envelope);
    if (later.type === 'tool_end' && later.payload.id === pending.toolCallId) withdraw.abort();
  });
  const settle = (answer: { option: string } | { answer: string } | { declined: true }) => {
    try {
      session.governance.answerQuestion(questionId, answer);
    } catch {
      // Settled elsewhere meanwhile, or the session closed: that outcome stands.
    }
  };
  try {
    if (elicitsForms) {
      const response = await client
        .request(
          'elicitation/create',
          {
            mode: 'form',
            sessionId: session.id,
            toolCallId: toolCallId ?? pending.toolCallId,
            message: question,
            requestedSchema: {
              type: 'object',
              properties: {
                answer:
                  pending.options.length > 0 && !pending.allowFreeText
                    ? { type: 'string', title: question, enum: [...pending.options] }
                    : {
                        type: 'string',
                        title: question,
                        minLength: 1,
                        ...(pending.options.length > 0 ? { description: `e.g. ${pending.options.join(', ')}` } : {}),
                      },
              },
              required: ['answer'],
            },
            _meta: { questionId, timeoutMs: pending.timeoutMs },
          },
          { cancellationSignal: withdraw.signal, stopWaitingOnCancel: true },
        )
        .catch(() => undefined);
      const reply = response as { action?: string; content?: Record<string, unknown> | null } | undefined;
      if (withdraw.signal.aborted) return;
      // The user declined in the editor: the question is settled declined (a `cancel`, dismissed without a
      // choice, leaves it for another client or its timeout).
      if (reply?.action === 'decline') {
        settle({ declined: true });
        return;
      }
      const given = reply?.content?.answer;
      if (typeof given !== 'string' || given === '') return;
      if (pending.options.includes(given)) settle({ option: given });
      else if (pending.allowFreeText) settle({ answer: given });
      return;
    }
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
    if (option !== undefined) settle({ option });
  } finally {
    unwatch();
  }
}

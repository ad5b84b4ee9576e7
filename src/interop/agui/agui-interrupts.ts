import type { Interrupt, TokenUsage } from '@ag-ui/core';
import type { KnownEvent } from '../../protocol/agent-event-envelope.js';
import type { PendingQuestionView } from '../../protocol/questions.js';
import type { PendingConfirmation } from '../../runtime/policy/confirmation-broker.js';

/** The answer schema of a tool-call interrupt (what `resume[].payload` must hold). */
export const INTERRUPT_RESPONSE_SCHEMA = {
  type: 'object',
  properties: { approved: { type: 'boolean' }, reason: { type: 'string' }, always: { type: 'boolean' } },
  required: ['approved'],
} as const;

/** The interrupt reason of a question of the agent (the ask_user tool). */
export const QUESTION_INTERRUPT_REASON = 'user_question';

/**
 * The answer schema of a question interrupt: `{answer}` (free text, when the question allows it),
 * `{option}` (one of those offered) or `{declined: true}` (the user will not answer), exactly one of them.
 */
export function questionResponseSchema(question: PendingQuestionView): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  if (question.allowFreeText) properties.answer = { type: 'string', minLength: 1 };
  if (question.options.length > 0) properties.option = { type: 'string', enum: [...question.options] };
  properties.declined = { type: 'boolean', const: true };
  return {
    type: 'object',
    properties,
    minProperties: 1,
    maxProperties: 1,
    additionalProperties: false,
  };
}

/** What is pending in one run: confirmations and questions, with the server clock for expiresAt. */
export interface AguiPending {
  confirmations: readonly PendingConfirmation[];
  questions: readonly PendingQuestionView[];
  now: number;
  /** Tool calls announced to the client whose result it has not seen (an interrupt names its call then). */
  announced: (toolCallId: string) => boolean;
}

/** The interrupts of a run waiting on a human: each pending confirmation (`tool_call`), then each question. */
export function aguiInterrupts({ confirmations, questions, now, announced }: AguiPending): Interrupt[] {
  return [
    ...confirmations.map((c) => ({
      id: c.toolId,
      reason: 'tool_call',
      message: `Allow the ${c.toolName} tool call?`,
      ...(announced(c.toolId) ? { toolCallId: c.toolId } : {}),
      responseSchema: { ...INTERRUPT_RESPONSE_SCHEMA },
      expiresAt: new Date(now + c.remainingMs).toISOString(),
      metadata: { toolName: c.toolName, args: c.args, argsDigest: c.argsDigest },
    })),
    ...questions.map((q) => ({
      id: q.questionId,
      reason: QUESTION_INTERRUPT_REASON,
      message: q.question,
      ...(announced(q.toolCallId) ? { toolCallId: q.toolCallId } : {}),
      responseSchema: questionResponseSchema(q),
      expiresAt: new Date(now + q.remainingMs).toISOString(),
      metadata: { options: [...q.options], allowFreeText: q.allowFreeText },
    })),
  ];
}

/** The AG-UI token usage of a run's agent_end. */
export function aguiTokenUsage(p: KnownEvent<'agent_end'>['payload']): TokenUsage {
  return {
    ...(p.meta?.provider !== undefined ? { provider: p.meta.provider } : {}),
    ...(p.meta?.request_model !== undefined ? { model: p.meta.request_model } : {}),
    inputTokens: p.usage.prompt_tokens,
    outputTokens: p.usage.completion_tokens,
    totalTokens: p.usage.total_tokens,
  };
}

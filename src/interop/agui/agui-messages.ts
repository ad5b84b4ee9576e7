import type { Message } from '@ag-ui/core';
import type { ChatMessage } from '../../protocol/chat-message.js';

/**
 * The session's transcript as AG-UI messages (MESSAGES_SNAPSHOT), ids `m<index>`: user, assistant (with
 * its tool calls, and its reasoning as a reasoning message before it) and tool messages. System messages
 * stay on the server: they hold the system prompt.
 */
export function toAguiMessages(history: readonly ChatMessage[]): Message[] {
  const messages: Message[] = [];
  history.forEach((m, index) => {
    const id = `m${index}`;
    if (m.role === 'user') messages.push({ id, role: 'user', content: m.content ?? '' });
    else if (m.role === 'tool')
      messages.push({ id, role: 'tool', content: m.content ?? '', toolCallId: m.tool_call_id ?? '' });
    else if (m.role === 'assistant') {
      if (m.reasoning) messages.push({ id: `${id}.reasoning`, role: 'reasoning', content: m.reasoning });
      messages.push({
        id,
        role: 'assistant',
        ...(m.content ? { content: m.content } : {}),
        ...(m.tool_calls && m.tool_calls.length > 0
          ? {
              toolCalls: m.tool_calls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.function.name, arguments: c.function.arguments },
              })),
            }
          : {}),
      });
    }
  });
  return messages;
}

import type { SessionUpdate } from '@agentclientprotocol/sdk';
import type { ChatMessage } from '../../protocol/chat-message.js';
import { acpToolKind } from './acp-tool-kind.js';

/**
 * A session's transcript as the `session/update` notifications session/load replays: user messages as
 * user_message_chunk, assistant text and reasoning as agent_message_chunk / agent_thought_chunk, each tool
 * call as a tool_call with its arguments, and its result as a completed tool_call_update. System messages
 * are not replayed.
 */
export function acpHistoryUpdates(messages: readonly ChatMessage[]): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  for (const message of messages) {
    const content = message.content ?? '';
    if (message.role === 'user' && content !== '')
      updates.push({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: content } });
    if (message.role === 'assistant') {
      if (message.reasoning)
        updates.push({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: message.reasoning } });
      if (content !== '')
        updates.push({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: content } });
      for (const call of message.tool_calls ?? []) {
        let rawInput: unknown = call.function.arguments;
        try {
          rawInput = JSON.parse(call.function.arguments);
        } catch {
          // Keep the text the model wrote.
        }
        updates.push({
          sessionUpdate: 'tool_call',
          toolCallId: call.id,
          title: call.function.name,
          name: call.function.name,
          kind: acpToolKind(call.function.name),
          status: 'pending',
          rawInput,
        });
      }
    }
    if (message.role === 'tool' && message.tool_call_id !== undefined) {
      updates.push({
        sessionUpdate: 'tool_call_update',
        toolCallId: message.tool_call_id,
        status: 'completed',
        content: [{ type: 'content', content: { type: 'text', text: content } }],
      });
    }
  }
  return updates;
}

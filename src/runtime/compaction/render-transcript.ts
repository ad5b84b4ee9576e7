import type { ChatMessage } from '../../protocol/chat-message.js';

/** The share of the character budget one message may take before its own middle is elided. */
const MESSAGE_SHARE = 4;

function elideMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const half = Math.max(1, Math.floor(maxChars / 2));
  return `${text.slice(0, half)}\n[... ${text.length - 2 * half} characters elided ...]\n${text.slice(-half)}`;
}

function renderMessage(m: ChatMessage, index: number): string {
  const head =
    m.role === 'tool'
      ? `### ${index + 1}. tool result (${m.tool_call_id ?? 'unknown call'})`
      : `### ${index + 1}. ${m.role}`;
  const parts = [head];
  if (m.content) parts.push(m.content);
  for (const call of m.tool_calls ?? [])
    parts.push(`[tool call ${call.id}: ${call.function.name} ${call.function.arguments}]`);
  return parts.join('\n');
}

/**
 * The messages to summarise as one text for the summary request, within `maxChars`: each message is
 * capped at a quarter of the budget (its middle elided), and when they still do not fit, the middle
 * messages are elided so the beginning and the end of the conversation both reach the model.
 */
export function renderTranscript(messages: readonly ChatMessage[], maxChars: number): string {
  const perMessage = Math.max(200, Math.floor(maxChars / MESSAGE_SHARE));
  const blocks = messages.map((m, i) => elideMiddle(renderMessage(m, i), perMessage));
  const total = blocks.reduce((sum, b) => sum + b.length + 2, 0);
  if (total <= maxChars) return blocks.join('\n\n');
  const half = Math.floor(maxChars / 2);
  const head: string[] = [];
  let used = 0;
  let first = 0;
  for (; first < blocks.length && used + blocks[first]!.length + 2 <= half; first += 1) {
    head.push(blocks[first]!);
    used += blocks[first]!.length + 2;
  }
  const tail: string[] = [];
  used = 0;
  let last = blocks.length - 1;
  for (; last >= first && used + blocks[last]!.length + 2 <= half; last -= 1) {
    tail.unshift(blocks[last]!);
    used += blocks[last]!.length + 2;
  }
  const elided = last - first + 1;
  return [
    ...head,
    `[... ${elided} message${elided === 1 ? '' : 's'} of the middle of the conversation elided ...]`,
    ...tail,
  ].join('\n\n');
}

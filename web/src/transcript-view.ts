import type { ChatMessage } from '../../src/client/index.js';
import type { AttachmentRef } from '../../src/protocol/attachments.js';
import { el } from './el.js';
import { formatJson, preview } from './format.js';
import { markdownNodes } from './markdown-view.js';

/** The text of a message's content (a string, or text parts). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((part) =>
        typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string'
          ? (part as { text: string }).text
          : '',
      )
      .join('');
  return content === null || content === undefined ? '' : formatJson(content);
}

/**
 * The session's transcript (history) as a conversation: prompts (with their attachments, when `attachments`
 * renders them), answers, tool calls and results folded.
 */
export function transcriptView(
  messages: readonly ChatMessage[],
  attachments?: (refs: readonly AttachmentRef[]) => HTMLElement,
): HTMLElement {
  if (messages.length === 0) return el('p', { class: 'muted' }, 'The transcript is empty.');
  const items = messages.map((message) => {
    const m = message as unknown as {
      role: string;
      content?: unknown;
      tool_calls?: { id?: string; function?: { name?: string; arguments?: unknown } }[];
      tool_call_id?: string;
      name?: string;
      attachments?: AttachmentRef[];
    };
    const text = contentText(m.content);
    if (m.role === 'tool') {
      return el(
        'li',
        { class: 'message message-tool' },
        el(
          'details',
          {},
          el('summary', {}, `Tool result ${m.name ?? ''} `, el('span', { class: 'muted' }, preview(text, 60))),
          el('pre', {}, text),
        ),
      );
    }
    const calls = (m.tool_calls ?? []).map((call) =>
      el(
        'details',
        { class: 'tool' },
        el(
          'summary',
          {},
          el('span', { class: 'tool-name' }, call.function?.name ?? 'tool'),
          el('span', { class: 'tool-preview' }, preview(call.function?.arguments ?? '', 70)),
        ),
        el('pre', { class: 'tool-args' }, formatJson(call.function?.arguments)),
      ),
    );
    return el(
      'li',
      { class: `message message-${m.role === 'user' ? 'user' : m.role === 'assistant' ? 'assistant' : 'system'}` },
      el('span', { class: 'role' }, m.role),
      text
        ? m.role === 'assistant'
          ? el('div', { class: 'message-text markdown' }, ...markdownNodes(text))
          : el('p', { class: 'message-text' }, text)
        : null,
      m.attachments && m.attachments.length > 0 && attachments ? attachments(m.attachments) : null,
      ...calls,
    );
  });
  return el('ol', { class: 'transcript-list' }, ...items);
}

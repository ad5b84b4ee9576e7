import type { ChatMessage } from '../../protocol/chat-message.js';
import type { ContextReading } from '../loop/context-reading.js';

/** The seed's estimator: a token is about 4 bytes of UTF-8. */
export const BYTES_PER_TOKEN = 4;

/** UTF-8 bytes of messages: every content, reasoning, tool-call name and argument string (the transcript bound measures this too). */
export function messageBytes(messages: readonly ChatMessage[]): number {
  let bytes = 0;
  for (const m of messages) {
    if (m.content) bytes += Buffer.byteLength(m.content, 'utf8');
    if (m.reasoning) bytes += Buffer.byteLength(m.reasoning, 'utf8');
    for (const call of m.tool_calls ?? [])
      bytes += Buffer.byteLength(call.function.name, 'utf8') + Buffer.byteLength(call.function.arguments, 'utf8');
  }
  return bytes;
}

/** Estimated tokens of messages: messageBytes / 4, rounded up (the seed's estimator; used wherever the provider reported nothing). */
export function estimateMessageTokens(messages: readonly ChatMessage[]): number {
  return Math.ceil(messageBytes(messages) / BYTES_PER_TOKEN);
}

/**
 * The context size of a working transcript: the tokens the provider reported for the messages its last
 * turn covered, plus the estimate of the messages after them; the estimate of all when nothing was reported.
 */
export function contextTokens(messages: readonly ChatMessage[], reading: ContextReading | undefined): number {
  if (!reading || reading.reportedTokens <= 0 || reading.reportedMessages > messages.length)
    return estimateMessageTokens(messages);
  return reading.reportedTokens + estimateMessageTokens(messages.slice(reading.reportedMessages));
}

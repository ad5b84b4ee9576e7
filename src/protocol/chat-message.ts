import { z } from 'zod';
import { AttachmentRefSchema } from './attachments.js';

/** One tool call the assistant asked for, in the OpenAI chat shape. */
export const ToolCallSchema = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

/** One transcript message, in the OpenAI chat shape (snake_case on the wire and in snapshots). */
export const ChatMessageSchema = z
  .object({
    role: z.enum(['system', 'user', 'assistant', 'tool']),
    content: z.string().nullable(),
    tool_calls: z.array(ToolCallSchema).optional(),
    tool_call_id: z.string().optional(),
    reasoning: z.string().optional(),
    /** A user message's attachments, by reference (the bytes stay in the session's attachment store). */
    attachments: z.array(AttachmentRefSchema).optional(),
  })
  .meta({ id: 'ChatMessage' });

/** A transcript message. */
export type ChatMessage = z.infer<typeof ChatMessageSchema>;
/** A tool call inside an assistant message. */
export type ToolCall = z.infer<typeof ToolCallSchema>;

import type { ContentBlock } from '@agentclientprotocol/sdk';
import { CodeError } from '../../errors.js';
import type { RunAttachment } from '../../protocol/attachments.js';

/** What an ACP prompt becomes: the run input, and its image blocks as run attachments (checked later, by the server's attachment checks). */
export interface AcpPromptInput {
  text: string;
  attachments: RunAttachment[];
  /** Where each attachment is in the request (`prompt.N`), for errors naming the block. */
  fields: string[];
}

/**
 * The run input an ACP prompt becomes: text blocks as they are, embedded text resources as their URI and
 * text, resource links as `[name](uri)`, image blocks as image attachments (promptCapabilities.image).
 * Audio and binary resources are refused (we do not advertise them); the input is bounded by
 * limits.maxInputBytes like every run input.
 */
export function acpPromptInput(blocks: readonly ContentBlock[], maxInputBytes: number): AcpPromptInput {
  const attachments: RunAttachment[] = [];
  const fields: string[] = [];
  const parts = blocks.flatMap((block, index) => {
    switch (block.type) {
      case 'text':
        return [block.text];
      case 'image':
        attachments.push({ type: 'image', mediaType: block.mimeType, data: block.data });
        fields.push(`prompt.${index}`);
        return [];
      case 'resource_link':
        return [`[${block.name}](${block.uri})`];
      case 'resource':
        if ('text' in block.resource) return [`${block.resource.uri}:\n${block.resource.text}`];
        throw new CodeError(
          'VALIDATION_ERROR',
          `prompt[${index}]: binary resources are not supported (promptCapabilities advertises embedded text only)`,
          { field: `prompt.${index}` },
        );
      default:
        throw new CodeError(
          'VALIDATION_ERROR',
          `prompt[${index}]: ${block.type} content is not supported (promptCapabilities: text, images and embedded text resources)`,
          { field: `prompt.${index}` },
        );
    }
  });
  const input = parts.join('\n\n');
  if (input.trim() === '')
    throw new CodeError('VALIDATION_ERROR', 'prompt: the prompt has no text', { field: 'prompt' });
  const bytes = Buffer.byteLength(input, 'utf8');
  if (bytes > maxInputBytes)
    throw new CodeError(
      'PAYLOAD_TOO_LARGE',
      `prompt: ${bytes} bytes exceed limits.maxInputBytes (${maxInputBytes} UTF-8 bytes)`,
      { field: 'prompt', limit: 'limits.maxInputBytes', maxBytes: maxInputBytes, bytes },
    );
  if (attachments.length > 0 && input.startsWith('/'))
    throw new CodeError('VALIDATION_ERROR', 'prompt: a slash command takes no images', { field: 'prompt' });
  return { text: input, attachments, fields };
}

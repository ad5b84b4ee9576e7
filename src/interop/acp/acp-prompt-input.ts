import type { ContentBlock } from '@agentclientprotocol/sdk';
import { CodeError } from '../../errors.js';

/**
 * The run input an ACP prompt becomes: text blocks as they are, embedded text resources as their URI and
 * text, resource links as `[name](uri)`. Images, audio and binary resources are refused (we do not advertise
 * them); the input is bounded by limits.maxInputBytes like every run input.
 */
export function acpPromptInput(blocks: readonly ContentBlock[], maxInputBytes: number): string {
  const parts = blocks.map((block, index) => {
    switch (block.type) {
      case 'text':
        return block.text;
      case 'resource_link':
        return `[${block.name}](${block.uri})`;
      case 'resource':
        if ('text' in block.resource) return `${block.resource.uri}:\n${block.resource.text}`;
        throw new CodeError(
          'VALIDATION_ERROR',
          `prompt[${index}]: binary resources are not supported (promptCapabilities advertises embedded text only)`,
          { field: `prompt.${index}` },
        );
      default:
        throw new CodeError(
          'VALIDATION_ERROR',
          `prompt[${index}]: ${block.type} content is not supported (promptCapabilities: text and embedded text resources)`,
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
  return input;
}

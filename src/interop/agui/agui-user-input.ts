import type { ContentPart, RunAgentInput } from '@ag-ui/core';
import { CodeError } from '../../errors.js';
import type { RunAttachment } from '../../protocol/attachments.js';
import { MULTITASK_STRATEGIES, type MultitaskStrategy } from '../../protocol/multitask-strategy.js';

/** The run an AG-UI user message becomes: its text, and its media parts as run attachments (not yet checked). */
export interface AguiUserInput {
  text: string;
  /** Where the text is in the body (`body.messages.N.content`), for errors naming it. */
  field: string;
  attachments: RunAttachment[];
  /** Where each attachment is in the body (`body.messages.N.content.M`), for errors naming the part. */
  attachmentFields: string[];
}

function invalid(field: string, message: string): CodeError {
  return new CodeError('VALIDATION_ERROR', `${field}: ${message}`, { field, issues: [{ path: field, message }] });
}

/** A name for a text part's file: its metadata.name (or filename), else its id, else `part-<index>.txt`. */
function fileName(part: ContentPart, index: number): string {
  const meta: unknown = 'metadata' in part ? part.metadata : undefined;
  const named =
    meta !== null && typeof meta === 'object'
      ? ((meta as { name?: unknown; filename?: unknown }).name ?? (meta as { filename?: unknown }).filename)
      : undefined;
  const name = typeof named === 'string' && named.trim() !== '' ? named : (part.id ?? `part-${index}.txt`);
  return name.slice(0, 255);
}

/**
 * One media part (image or document) as a run attachment: bytes inline (`source: {type: "data", value,
 * mimeType}`) or an attachment uploaded to this session (`source: {type: "file", value: "att_…"}`); an
 * `image/*` type is an image, a `text/*` type a text file. Remote URLs are not fetched, and other media
 * (audio, video, other types) are refused, each naming the part.
 */
function mediaAttachment(part: ContentPart, index: number, field: string): RunAttachment {
  if (part.type === 'text') throw new Error('unreachable: a text part');
  if (part.type === 'audio' || part.type === 'video')
    throw invalid(`${field}.type`, `"${part.type}" parts are not supported: send text, images or text files`);
  const source = part.source;
  if (source.type === 'url')
    throw invalid(
      `${field}.source`,
      'remote URLs are not fetched: send the bytes (source {type: "data", value: base64, mimeType}) or upload them first (POST /v1/sessions/:id/attachments) and send source {type: "file", value: attachmentId}',
    );
  const mimeType = source.mimeType;
  const kind = mimeType?.startsWith('image/')
    ? 'image'
    : mimeType?.startsWith('text/')
      ? 'file'
      : mimeType === undefined && source.type === 'file'
        ? part.type === 'image'
          ? 'image'
          : 'file'
        : undefined;
  if (kind === undefined)
    throw invalid(
      `${field}.source.mimeType`,
      `"${mimeType ?? '(none)'}" is not supported: images (image/png, image/jpeg, image/gif, image/webp) and text files (text/*) are`,
    );
  const mediaType = mimeType ?? (kind === 'image' ? 'image/png' : 'text/plain');
  const bytes = source.type === 'data' ? { data: source.value } : { attachmentId: source.value };
  return kind === 'image'
    ? { type: 'image', mediaType, ...bytes }
    : { type: 'file', name: fileName(part, index), mediaType, ...bytes };
}

/** The run input: the last message, which must be a user message with some text; its media parts become attachments. */
export function aguiUserInput(input: RunAgentInput): AguiUserInput {
  const index = input.messages.length - 1;
  const last = input.messages[index];
  if (!last) throw invalid('body.messages', 'must end with a user message: it becomes the run input');
  if (last.role !== 'user')
    throw invalid(
      `body.messages.${index}.role`,
      `the last message must be a user message (got "${last.role}"); answer interrupts with body.resume`,
    );
  const field = `body.messages.${index}.content`;
  if (typeof last.content === 'string') {
    if (last.content.trim() === '') throw invalid(field, 'must not be empty');
    return { text: last.content, field, attachments: [], attachmentFields: [] };
  }
  const texts: string[] = [];
  const attachments: RunAttachment[] = [];
  const attachmentFields: string[] = [];
  last.content.forEach((part, i) => {
    if (part.type === 'text') {
      texts.push(part.text);
      return;
    }
    attachments.push(mediaAttachment(part, i, `${field}.${i}`));
    attachmentFields.push(`${field}.${i}`);
  });
  const text = texts.join('\n');
  if (text.trim() === '') throw invalid(field, 'must hold some text (a text part beside the media parts)');
  if (attachments.length > 100) throw invalid(field, `holds ${attachments.length} media parts; at most 100`);
  if (attachments.length > 0 && text.startsWith('/')) throw invalid(field, 'a slash command takes no attachments');
  return { text, field, attachments, attachmentFields };
}

/** `forwardedProps.multitaskStrategy`: what a run does while the session is busy (default reject); others refused by name. */
export function aguiMultitaskStrategy(input: RunAgentInput): MultitaskStrategy | undefined {
  const props: unknown = input.forwardedProps;
  if (props === undefined || props === null || typeof props !== 'object' || Array.isArray(props)) return undefined;
  const value = (props as { multitaskStrategy?: unknown }).multitaskStrategy;
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !(MULTITASK_STRATEGIES as readonly string[]).includes(value))
    throw invalid(
      'body.forwardedProps.multitaskStrategy',
      `${JSON.stringify(value)} is not a multitask strategy (${MULTITASK_STRATEGIES.join(', ')})`,
    );
  return value as MultitaskStrategy;
}

import { z } from 'zod';

/** An attachment id: `att_` and 32 lowercase hex digits (never a path; anything else is unknown). */
export const ATTACHMENT_ID = /^att_[0-9a-f]{32}$/;

/** The image media types accepted (checked against the bytes' magic numbers). */
export const IMAGE_MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;

/** What the transcript, snapshots and checkpoints keep of an attachment: a reference, never its bytes. */
export const AttachmentRefSchema = z
  .object({
    attachmentId: z.string().regex(ATTACHMENT_ID),
    type: z.enum(['image', 'file']),
    mediaType: z.string(),
    name: z.string().optional(),
    bytes: z.number().int().nonnegative(),
    /** `sha256:<hex>` of the bytes. */
    sha256: z.string(),
  })
  .strict()
  .meta({ id: 'AttachmentRef' });

/** An attachment reference. */
export type AttachmentRef = z.infer<typeof AttachmentRefSchema>;

const mediaType = z.string().min(1).max(255);
// Inline parts travel in the JSON body (limits.body_limit_bytes, 1 MiB by default): larger files are uploaded first.
const data = z
  .string()
  .min(1)
  .max(1_000_000)
  .describe('The bytes, base64 (standard alphabet, padded or not); at most 1,000,000 characters: upload larger files.');
const attachmentId = z.string().min(1).max(64).describe('An attachment uploaded to this session.');

/** One attachment of a run (seed `Attachment`): an image or a text file, inline (base64) or uploaded before. */
export const RunAttachmentSchema = z
  .discriminatedUnion('type', [
    z
      .object({ type: z.literal('image'), mediaType, data: data.optional(), attachmentId: attachmentId.optional() })
      .strict(),
    z
      .object({
        type: z.literal('file'),
        name: z.string().min(1).max(255),
        mediaType,
        data: data.optional(),
        attachmentId: attachmentId.optional(),
      })
      .strict(),
  ])
  .refine((part) => (part.data === undefined) !== (part.attachmentId === undefined), {
    message: 'exactly one of data and attachmentId',
  })
  .meta({ id: 'RunAttachment' });

/** One attachment of a run request. */
export type RunAttachment = z.infer<typeof RunAttachmentSchema>;

/** Answer of POST /v1/sessions/:id/attachments (201). */
export const AttachmentUploadResponseSchema = AttachmentRefSchema.meta({ id: 'AttachmentUpload' });

/** Session + attachment id path parameters. */
export const AttachmentParamsSchema = z
  .object({ id: z.string().min(1).max(128), attachmentId: z.string().min(1).max(128) })
  .strict();

/** Query of the upload route: a file's name (the `X-Attachment-Name` header works too). */
export const AttachmentUploadQuerySchema = z
  .object({ name: z.string().min(1).max(255).optional(), tenantId: z.string().min(1).max(200).optional() })
  .strict();

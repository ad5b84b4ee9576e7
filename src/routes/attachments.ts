import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { CodeError } from '../errors.js';
import {
  IMAGE_MEDIA_TYPES,
  AttachmentParamsSchema,
  AttachmentRefSchema,
  AttachmentUploadQuerySchema,
  AttachmentUploadResponseSchema,
} from '../protocol/attachments.js';
import { ErrorBodySchema, SessionParamsSchema, SessionTenantQuerySchema } from '../protocol/http.js';
import { attachmentTooLarge, type SessionAttachments } from '../runtime/attachments/session-attachments.js';
import { addRoute } from '../server/route.js';
import { UploadBudget } from '../server/upload-budget.js';
import { quotaExceeded } from '../runtime/quotas/quota-exceeded.js';
import type { ServerContext } from '../server/server-context.js';

const UPLOAD_URL = '/v1/sessions/:id/attachments';
const DOWNLOAD_URL = '/v1/sessions/:id/attachments/:attachmentId';

/** A media type the upload checks let through (an image type, or a bare `text/<subtype>`). */
const SERVED_MEDIA_TYPE = new RegExp(`^(?:${IMAGE_MEDIA_TYPES.join('|')}|text/[a-z0-9][a-z0-9.+-]*)$`);

/**
 * The download's safety headers on every answer of the route, an error too (401, 404, a validation error, a
 * store failure): set before authentication, so no path of it is rendered inline or sniffed.
 */
function registerDownloadHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    if (request.method === 'GET' && request.routeOptions.url === DOWNLOAD_URL)
      reply
        .header('content-disposition', 'attachment')
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', 'sandbox')
        .header('cache-control', 'private, no-store');
    done();
  });
}

/** How many limits.maxAttachmentBytes of uploads one tenant may hold in memory at once. */
export const UPLOADS_IN_FLIGHT_PER_TENANT = 4;

/**
 * The raw body of an upload as one Buffer, bounded by limits.maxAttachmentBytes while it arrives (a declared
 * or received length past it is 413 at once, the rest of the body discarded unread into nothing). With a
 * `lease`, every chunk is taken from the tenant's upload budget first: past it the upload is 429 at once.
 */
function readUpload(
  request: FastifyRequest,
  maxBytes: number,
  take?: (bytes: number) => Error | undefined,
): Promise<Buffer> {
  const stream = request.raw;
  return new Promise((resolve, reject) => {
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      stream.resume();
      reject(attachmentTooLarge('body', declared, maxBytes));
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    const refuse = (error: Error): void => {
      stream.off('data', onData);
      stream.resume();
      chunks.length = 0;
      reject(error);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > maxBytes) return refuse(attachmentTooLarge('body', received, maxBytes));
      const over = take?.(chunk.length);
      if (over !== undefined) return refuse(over);
      chunks.push(chunk);
    };
    stream.on('data', onData);
    stream.once('end', () => resolve(Buffer.concat(chunks, received)));
    stream.once('error', reject);
  });
}

/**
 * The body parsers of uploads: any media type reaches the upload route as raw bytes, each upload taking its
 * bytes from its tenant's UploadBudget until it is answered; elsewhere JSON only, as before.
 */
function registerUploadParsers(app: FastifyInstance, ctx: ServerContext): void {
  const { maxAttachmentBytes: maxBytes, bodyLimitBytes: bodyLimit } = ctx.config.limits;
  const budget = new UploadBudget(UPLOADS_IN_FLIGHT_PER_TENANT * maxBytes);
  const answers = new WeakMap<FastifyRequest, FastifyReply>();
  const isUpload = (request: FastifyRequest): boolean =>
    request.method === 'POST' && request.routeOptions.url === UPLOAD_URL;
  app.addHook('onRequest', (request, reply, done) => {
    if (isUpload(request)) answers.set(request, reply);
    done();
  });
  // The route's own hook authenticated the caller before any body is parsed: its tenant's budget.
  const taker = (request: FastifyRequest): ((bytes: number) => Error | undefined) | undefined => {
    const reply = answers.get(request);
    if (reply === undefined) return undefined;
    const tenantId = ctx.authenticator.fromHeader(request.headers.authorization).tenantId;
    const lease = budget.lease(tenantId, reply.raw);
    return (bytes) =>
      lease.take(bytes)
        ? undefined
        : quotaExceeded({
            tenantId,
            quota: 'uploadBytesInFlight',
            limit: budget.limit,
            used: lease.used(),
            configKey: `${UPLOADS_IN_FLIGHT_PER_TENANT} x limits.max_attachment_bytes`,
            retryAfterSeconds: 1,
          });
  };
  const upload = (request: FastifyRequest): Promise<Buffer> => {
    try {
      return readUpload(request, maxBytes, taker(request));
    } catch (error) {
      request.raw.resume();
      return Promise.reject(error as Error);
    }
  };
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('text/plain', (request, _payload, done) => {
    (isUpload(request) ? upload(request) : readUpload(request, bodyLimit)).then(
      (data) => done(null, isUpload(request) ? data : data.toString('utf8')),
      (error: Error) =>
        done(
          isUpload(request) ? error : new CodeError('PAYLOAD_TOO_LARGE', 'request body exceeds limits.bodyLimitBytes'),
        ),
    );
  });
  app.addContentTypeParser('*', (request, _payload, done) => {
    if (!isUpload(request)) {
      done(new CodeError('VALIDATION_ERROR', 'body: content-type must be application/json'));
      return;
    }
    upload(request).then(
      (data) => done(null, data),
      (error: Error) => done(error),
    );
  });
}

/** Attachment routes: upload (raw body), list, and serve back as a download only. */
export function registerAttachmentRoutes(
  app: FastifyInstance,
  ctx: ServerContext,
  attachments: SessionAttachments,
): void {
  const { agent } = ctx;
  registerUploadParsers(app, ctx);
  registerDownloadHeaders(app);
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: UPLOAD_URL,
      summary: 'Upload an attachment (the raw body; content-type is its media type)',
      description:
        'The body is the raw bytes (not JSON): `content-type` is the media type (image/png, image/jpeg, image/gif, image/webp checked by magic bytes; text/* checked as UTF-8), a text file names itself with the `name` query or the `X-Attachment-Name` header. Over limits.maxAttachmentBytes (default 20 MiB) is 413 PAYLOAD_TOO_LARGE naming it; a session holds at most limits.maxAttachmentsPerSession (100). The attachmentId resolves only in this session. See docs/attachments.md.',
      scope: 'sessions',
      params: SessionParamsSchema,
      query: AttachmentUploadQuerySchema,
      headers: { 'X-Attachment-Name': "Optional; a text file's name, 1-255 characters (the name query wins)." },
      responses: {
        201: AttachmentUploadResponseSchema,
        400: ErrorBodySchema,
        404: ErrorBodySchema,
        413: ErrorBodySchema,
      },
    },
    async ({ params, query, caller, request, reply }) => {
      const session = agent.getSession(params.id, caller);
      if (!Buffer.isBuffer(request.body))
        throw new CodeError(
          'VALIDATION_ERROR',
          `headers.content-type: "${request.headers['content-type'] ?? ''}" is not accepted: the raw bytes of an image (png, jpeg, gif, webp) or a text/* file`,
          { field: 'content-type' },
        );
      const header = request.headers['x-attachment-name'];
      // The header is bounded like the query (1-255 characters): a 16 KB name would be stored and sent as is.
      if (typeof header === 'string' && header.length > 255)
        throw new CodeError('VALIDATION_ERROR', `headers.x-attachment-name: ${header.length} characters, at most 255`, {
          field: 'x-attachment-name',
        });
      const name = query.name ?? (typeof header === 'string' && header !== '' ? header : undefined);
      const ref = await attachments.upload(session.key, request.headers['content-type'] ?? '', name, request.body);
      reply.status(201);
      return ref;
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: UPLOAD_URL,
      summary: "The session's attachments (references, no bytes)",
      scope: 'sessions',
      params: SessionParamsSchema,
      query: SessionTenantQuerySchema,
      responses: { 200: z.object({ attachments: z.array(AttachmentRefSchema) }), 404: ErrorBodySchema },
    },
    async ({ params, caller }) => ({
      attachments: await attachments.store.list(agent.getSession(params.id, caller).key),
    }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: DOWNLOAD_URL,
      summary: 'Download an attachment (never rendered inline)',
      description:
        'Served only as a download: `Content-Disposition: attachment`, `X-Content-Type-Options: nosniff`, `Content-Security-Policy: sandbox`. 404 for an id this session did not upload.',
      scope: 'sessions',
      params: AttachmentParamsSchema,
      query: SessionTenantQuerySchema,
      produces: 'application/octet-stream',
      responses: { 200: z.string(), 404: ErrorBodySchema },
    },
    async ({ params, caller, reply }) => {
      const found = await attachments.get(agent.getSession(params.id, caller).key, params.attachmentId);
      const filename = (found.ref.name ?? found.ref.attachmentId).replace(/[^\x20-\x7e]|["\\]/g, '_');
      // A reference edited on disk may name any type: only the types an upload lets through are served as such.
      const mediaType = SERVED_MEDIA_TYPE.test(found.ref.mediaType) ? found.ref.mediaType : 'application/octet-stream';
      reply
        .header('content-type', mediaType)
        .header(
          'content-disposition',
          `attachment; filename="${filename}"; filename*=UTF-8''${encodeURIComponent(found.ref.name ?? found.ref.attachmentId)}`,
        )
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', 'sandbox')
        .header('cache-control', 'private, no-store');
      return found.data;
    },
  );
}

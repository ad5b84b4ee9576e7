import { z } from 'zod';
import { ATTACHMENT_ID, AttachmentRefSchema, type AttachmentRef } from '../protocol/attachments.js';
import type { AttachmentStore, StoredAttachment } from '../runtime/ports/attachment-store.js';
import type { RedisClient } from './redis-client.js';
import { redisFailure } from './redis-failure.js';
import { redisAttachmentKey, redisAttachmentsKey } from './redis-keys.js';
import { defineRedisScript, runRedisScript } from './redis-script.js';
import type { SessionKey } from './session-key.js';

// KEYS: references hash, bytes key. ARGV: max count, attachment id, bytes, reference JSON.
// The count check and both writes are one script: concurrent puts on any node never pass the bound.
const PUT = defineRedisScript(`
local count = redis.call('HLEN', KEYS[1])
if count >= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[2], ARGV[3])
redis.call('HSET', KEYS[1], ARGV[2], ARGV[4])
return 1
`);

// KEYS: references hash. ARGV: the bytes-key prefix. Removes every attachment of the session.
const DELETE_SESSION = defineRedisScript(`
local ids = redis.call('HKEYS', KEYS[1])
for _, id in ipairs(ids) do redis.call('DEL', ARGV[1] .. id) end
redis.call('DEL', KEYS[1])
return #ids
`);

const EntrySchema = z.object({ at: z.number(), ref: AttachmentRefSchema });

/**
 * AttachmentStore on Redis, under the session's hash tag (one Redis Cluster slot with its snapshot, so a
 * run resumed on another node sends the same parts): a hash of references (`...:attachments`, field = id,
 * value = `{at, ref}`) and one string of bytes per attachment (`...:attachment:<id>`).
 */
export class RedisAttachmentStore implements AttachmentStore {
  readonly kind = 'redis';

  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {}

  /** Store unless the session holds maxCount already (one script). */
  async put(session: SessionKey, ref: AttachmentRef, data: Buffer, maxCount: number): Promise<boolean> {
    const entry = JSON.stringify({ at: Date.now(), ref });
    try {
      const reply = await runRedisScript(
        this.redis,
        PUT,
        [redisAttachmentsKey(this.keyPrefix, session), redisAttachmentKey(this.keyPrefix, session, ref.attachmentId)],
        [maxCount, ref.attachmentId, data, entry],
      );
      return reply === 1;
    } catch (error) {
      throw redisFailure('failed to store an attachment', { attachmentId: ref.attachmentId }, error);
    }
  }

  /** The attachment with its bytes, or undefined. */
  async get(session: SessionKey, attachmentId: string): Promise<StoredAttachment | undefined> {
    if (!ATTACHMENT_ID.test(attachmentId)) return undefined;
    try {
      const [raw, data] = await Promise.all([
        this.redis.hget(redisAttachmentsKey(this.keyPrefix, session), attachmentId),
        this.redis.getBuffer(redisAttachmentKey(this.keyPrefix, session, attachmentId)),
      ]);
      const entry = parseEntry(raw);
      return entry === undefined || data === null || entry.ref.attachmentId !== attachmentId
        ? undefined
        : { ref: entry.ref, data };
    } catch (error) {
      throw redisFailure('failed to read an attachment', { attachmentId }, error);
    }
  }

  /** The session's references, oldest first. */
  async list(session: SessionKey): Promise<AttachmentRef[]> {
    let raw: Record<string, string>;
    try {
      raw = await this.redis.hgetall(redisAttachmentsKey(this.keyPrefix, session));
    } catch (error) {
      throw redisFailure('failed to list attachments', {}, error);
    }
    return Object.values(raw)
      .flatMap((value) => {
        const entry = parseEntry(value);
        return entry === undefined ? [] : [entry];
      })
      .sort((a, b) => a.at - b.at || a.ref.attachmentId.localeCompare(b.ref.attachmentId))
      .map((entry) => entry.ref);
  }

  /** Remove one attachment. */
  async delete(session: SessionKey, attachmentId: string): Promise<void> {
    if (!ATTACHMENT_ID.test(attachmentId)) return;
    try {
      await this.redis.hdel(redisAttachmentsKey(this.keyPrefix, session), attachmentId);
      await this.redis.del(redisAttachmentKey(this.keyPrefix, session, attachmentId));
    } catch (error) {
      throw redisFailure('failed to delete an attachment', { attachmentId }, error);
    }
  }

  /** Remove every attachment of the session (one script, one slot). */
  async deleteSession(session: SessionKey): Promise<void> {
    try {
      await runRedisScript(
        this.redis,
        DELETE_SESSION,
        [redisAttachmentsKey(this.keyPrefix, session)],
        [redisAttachmentKey(this.keyPrefix, session, '')],
      );
    } catch (error) {
      throw redisFailure('failed to delete attachments', {}, error);
    }
  }

  /** Nothing to release: the client is the server's. */
  async close(): Promise<void> {}
}

function parseEntry(raw: string | null): z.infer<typeof EntrySchema> | undefined {
  if (raw === null) return undefined;
  try {
    const parsed = EntrySchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

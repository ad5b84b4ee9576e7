import {
  StoredRunWebhookSchema,
  StoredWebhookDeliverySchema,
  type StoredRunWebhook,
  type StoredWebhookDelivery,
} from '../protocol/webhooks.js';
import type { DueWebhookDelivery, WebhookStore } from '../runtime/ports/webhook-store.js';
import type { RedisClient } from './redis-client.js';
import { redisFailure } from './redis-failure.js';
import { redisWebhookClaimKey, redisWebhooksDueKey, redisWebhooksKey } from './redis-keys.js';
import { defineRedisScript, runRedisScript } from './redis-script.js';
import type { SessionKey } from './session-key.js';

// KEYS: the claim. ARGV: the owner. Deletes the claim only when the owner still holds it.
const RELEASE = defineRedisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

// KEYS: the session's webhooks hash. ARGV: the field, the JSON. Replaces a field only while it exists, so an attempt
// finishing after a purge does not bring the session's hash back.
const REPLACE = defineRedisScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`);

function parse<T>(
  raw: string | null,
  schema: { safeParse(value: unknown): { success: boolean; data?: T } },
): T | undefined {
  if (raw === null) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * WebhookStore on Redis: a session's run webhooks and deliveries in one hash under its hash tag (one Redis Cluster
 * slot with its snapshot), a claim key per delivery (SET NX PX: the node attempting it), and one sorted set of the
 * pending deliveries of every session by due time, which every node scans for deliveries a dead node left behind.
 */
export class RedisWebhookStore implements WebhookStore {
  readonly kind = 'redis';

  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {}

  private member(session: SessionKey, deliveryId: string): string {
    return `${session} ${deliveryId}`;
  }

  async putRunWebhook(session: SessionKey, runId: string, webhook: StoredRunWebhook): Promise<void> {
    try {
      await this.redis.hset(redisWebhooksKey(this.keyPrefix, session), `run:${runId}`, JSON.stringify(webhook));
    } catch (error) {
      throw redisFailure('failed to store a run webhook', { runId }, error);
    }
  }

  async getRunWebhook(session: SessionKey, runId: string): Promise<StoredRunWebhook | undefined> {
    try {
      return parse(
        await this.redis.hget(redisWebhooksKey(this.keyPrefix, session), `run:${runId}`),
        StoredRunWebhookSchema,
      );
    } catch (error) {
      throw redisFailure('failed to read a run webhook', { runId }, error);
    }
  }

  async createDelivery(session: SessionKey, delivery: StoredWebhookDelivery): Promise<StoredWebhookDelivery> {
    const key = redisWebhooksKey(this.keyPrefix, session);
    const field = `delivery:${delivery.deliveryId}`;
    const member = this.member(session, delivery.deliveryId);
    const due = redisWebhooksDueKey(this.keyPrefix);
    try {
      // The due entry first (its own slot in a Redis Cluster, so not in one script with the record): a node lost
      // between the two leaves an entry without a record, which the next read drops, never a record nobody scans.
      if (delivery.status === 'pending') await this.redis.zadd(due, 'NX', delivery.nextAttemptAtMs ?? 0, member);
      const created = await this.redis.hsetnx(key, field, JSON.stringify(delivery));
      if (created === 1) return delivery;
      const existing = await this.getDelivery(session, delivery.deliveryId);
      if (existing && existing.status !== 'pending') await this.redis.zrem(due, member);
      return existing ?? delivery;
    } catch (error) {
      throw redisFailure('failed to record a webhook delivery', { deliveryId: delivery.deliveryId }, error);
    }
  }

  async updateDelivery(session: SessionKey, delivery: StoredWebhookDelivery): Promise<void> {
    const key = redisWebhooksKey(this.keyPrefix, session);
    const field = `delivery:${delivery.deliveryId}`;
    const member = this.member(session, delivery.deliveryId);
    try {
      // A purged session's delivery is not brought back by an attempt that was under way.
      const replaced = await runRedisScript(this.redis, REPLACE, [key], [field, JSON.stringify(delivery)]);
      if (Number(replaced) === 0) {
        await this.redis.zrem(redisWebhooksDueKey(this.keyPrefix), member);
        return;
      }
      if (delivery.status === 'pending')
        await this.redis.zadd(redisWebhooksDueKey(this.keyPrefix), delivery.nextAttemptAtMs ?? 0, member);
      else await this.redis.zrem(redisWebhooksDueKey(this.keyPrefix), member);
    } catch (error) {
      throw redisFailure('failed to update a webhook delivery', { deliveryId: delivery.deliveryId }, error);
    }
  }

  async getDelivery(session: SessionKey, deliveryId: string): Promise<StoredWebhookDelivery | undefined> {
    try {
      const raw = await this.redis.hget(redisWebhooksKey(this.keyPrefix, session), `delivery:${deliveryId}`);
      // A due entry whose record is gone (purged, or a node lost between the two writes) is dropped here.
      if (raw === null) await this.redis.zrem(redisWebhooksDueKey(this.keyPrefix), this.member(session, deliveryId));
      return parse(raw, StoredWebhookDeliverySchema);
    } catch (error) {
      throw redisFailure('failed to read a webhook delivery', { deliveryId }, error);
    }
  }

  async listDeliveries(session: SessionKey): Promise<StoredWebhookDelivery[]> {
    let all: Record<string, string>;
    try {
      all = await this.redis.hgetall(redisWebhooksKey(this.keyPrefix, session));
    } catch (error) {
      throw redisFailure('failed to list webhook deliveries', {}, error);
    }
    const out: StoredWebhookDelivery[] = [];
    for (const [field, raw] of Object.entries(all)) {
      if (!field.startsWith('delivery:')) continue;
      const delivery = parse(raw, StoredWebhookDeliverySchema);
      if (delivery) out.push(delivery);
    }
    return out;
  }

  async due(nowMs: number, max: number): Promise<DueWebhookDelivery[]> {
    let members: string[];
    try {
      members = await this.redis.zrangebyscore(redisWebhooksDueKey(this.keyPrefix), '-inf', nowMs, 'LIMIT', 0, max);
    } catch (error) {
      throw redisFailure('failed to list due webhook deliveries', {}, error);
    }
    return members.flatMap((member) => {
      const space = member.lastIndexOf(' ');
      return space <= 0 ? [] : [{ session: member.slice(0, space) as SessionKey, deliveryId: member.slice(space + 1) }];
    });
  }

  async claim(session: SessionKey, deliveryId: string, owner: string, ttlMs: number): Promise<boolean> {
    try {
      const answer = await this.redis.set(
        redisWebhookClaimKey(this.keyPrefix, session, deliveryId),
        owner,
        'PX',
        ttlMs,
        'NX',
      );
      return answer === 'OK';
    } catch (error) {
      throw redisFailure('failed to claim a webhook delivery', { deliveryId }, error);
    }
  }

  async release(session: SessionKey, deliveryId: string, owner: string): Promise<void> {
    try {
      await runRedisScript(this.redis, RELEASE, [redisWebhookClaimKey(this.keyPrefix, session, deliveryId)], [owner]);
    } catch (error) {
      throw redisFailure('failed to release a webhook delivery', { deliveryId }, error);
    }
  }

  async deleteSession(session: SessionKey): Promise<void> {
    try {
      const deliveries = await this.listDeliveries(session);
      if (deliveries.length > 0)
        await this.redis.zrem(
          redisWebhooksDueKey(this.keyPrefix),
          ...deliveries.map((d) => this.member(session, d.deliveryId)),
        );
      await this.redis.del(redisWebhooksKey(this.keyPrefix, session));
    } catch (error) {
      throw redisFailure('failed to delete webhook deliveries', {}, error);
    }
  }
}

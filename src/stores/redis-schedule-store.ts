import type { z } from 'zod';
import {
  ScheduleRecordSchema,
  ScheduleTickStateSchema,
  type ScheduleRecord,
  type ScheduleTickState,
} from '../protocol/schedules.js';
import type { ScheduleCreateOutcome, ScheduleStore } from '../runtime/ports/schedule-store.js';
import type { RedisClient } from './redis-client.js';
import { redisFailure } from './redis-failure.js';
import { defineRedisScript, runRedisScript } from './redis-script.js';

// KEYS: all, names, counts. ARGV: id, tenant/name, tenant, json, max. One creation: name unique per tenant, count bounded.
const CREATE = defineRedisScript(`
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then return 'exists' end
if tonumber(redis.call('HGET', KEYS[3], ARGV[3]) or '0') >= tonumber(ARGV[5]) then return 'limit' end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
redis.call('HINCRBY', KEYS[3], ARGV[3], 1)
return 'created'
`);

// KEYS: all. ARGV: id, json. Replaces an existing schedule only.
const UPDATE = defineRedisScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`);

// KEYS: all, names, counts, ticks. ARGV: id, tenant/name, tenant.
const DELETE = defineRedisScript(`
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('HDEL', KEYS[4], ARGV[1])
if redis.call('HINCRBY', KEYS[3], ARGV[3], -1) <= 0 then redis.call('HDEL', KEYS[3], ARGV[3]) end
return 1
`);

// KEYS: all, ticks. ARGV: id, json. Not for a schedule deleted meanwhile.
const PUT_TICKS = defineRedisScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
`);

// KEYS: the lease. ARGV: holder. Deletes it only while this holder has it.
const RELEASE = defineRedisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

function decode<T>(schema: z.ZodType<T>, raw: string | null | undefined): T | undefined {
  if (raw === null || raw === undefined) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * ScheduleStore on Redis, shared by every node: hashes under one hash tag (`<prefix>{schedules}:...`, one Redis
 * Cluster slot, so each script touches one slot): `all` (id -> schedule), `names` (tenant/name -> id), `counts`
 * (tenant -> schedules), `ticks` (id -> tick state), and a `lease:<id>:<tick>` string per tick taken (SET NX PX).
 */
export class RedisScheduleStore implements ScheduleStore {
  readonly kind = 'redis';

  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {}

  private key(part: string): string {
    return `${this.keyPrefix}{schedules}:${part}`;
  }

  private static nameKey(schedule: ScheduleRecord): string {
    return `${encodeURIComponent(schedule.owner.tenantId)}/${schedule.name}`;
  }

  async create(schedule: ScheduleRecord, maxPerTenant: number): Promise<ScheduleCreateOutcome> {
    try {
      const reply = await runRedisScript(
        this.redis,
        CREATE,
        [this.key('all'), this.key('names'), this.key('counts')],
        [
          schedule.id,
          RedisScheduleStore.nameKey(schedule),
          schedule.owner.tenantId,
          JSON.stringify(schedule),
          maxPerTenant,
        ],
      );
      return reply as ScheduleCreateOutcome;
    } catch (error) {
      throw redisFailure('failed to store a schedule', { scheduleId: schedule.id }, error);
    }
  }

  async update(schedule: ScheduleRecord): Promise<boolean> {
    try {
      const reply = await runRedisScript(
        this.redis,
        UPDATE,
        [this.key('all')],
        [schedule.id, JSON.stringify(schedule)],
      );
      return reply === 1;
    } catch (error) {
      throw redisFailure('failed to store a schedule', { scheduleId: schedule.id }, error);
    }
  }

  async get(id: string): Promise<ScheduleRecord | undefined> {
    try {
      return decode(ScheduleRecordSchema, await this.redis.hget(this.key('all'), id));
    } catch (error) {
      throw redisFailure('failed to read a schedule', { scheduleId: id }, error);
    }
  }

  async list(tenantId?: string): Promise<ScheduleRecord[]> {
    let all: Record<string, string>;
    try {
      all = await this.redis.hgetall(this.key('all'));
    } catch (error) {
      throw redisFailure('failed to list schedules', {}, error);
    }
    return Object.values(all)
      .map((raw) => decode(ScheduleRecordSchema, raw))
      .filter((s): s is ScheduleRecord => s !== undefined && (tenantId === undefined || s.owner.tenantId === tenantId))
      .sort((a, b) => a.createdAtMs - b.createdAtMs || a.id.localeCompare(b.id));
  }

  async delete(id: string): Promise<boolean> {
    const schedule = await this.get(id);
    if (!schedule) return false;
    try {
      const reply = await runRedisScript(
        this.redis,
        DELETE,
        [this.key('all'), this.key('names'), this.key('counts'), this.key('ticks')],
        [id, RedisScheduleStore.nameKey(schedule), schedule.owner.tenantId],
      );
      return reply === 1;
    } catch (error) {
      throw redisFailure('failed to delete a schedule', { scheduleId: id }, error);
    }
  }

  async ticks(id: string): Promise<ScheduleTickState | undefined> {
    try {
      return decode(ScheduleTickStateSchema, await this.redis.hget(this.key('ticks'), id));
    } catch (error) {
      throw redisFailure("failed to read a schedule's ticks", { scheduleId: id }, error);
    }
  }

  async putTicks(state: ScheduleTickState): Promise<void> {
    try {
      await runRedisScript(
        this.redis,
        PUT_TICKS,
        [this.key('all'), this.key('ticks')],
        [state.id, JSON.stringify(state)],
      );
    } catch (error) {
      throw redisFailure("failed to store a schedule's ticks", { scheduleId: state.id }, error);
    }
  }

  async takeTickLease(id: string, tickAtMs: number, holder: string, ttlMs: number): Promise<boolean> {
    try {
      return (await this.redis.set(this.key(`lease:${id}:${tickAtMs}`), holder, 'PX', ttlMs, 'NX')) === 'OK';
    } catch (error) {
      throw redisFailure("failed to take a schedule tick's lease", { scheduleId: id }, error);
    }
  }

  async releaseTickLease(id: string, tickAtMs: number, holder: string): Promise<void> {
    try {
      await runRedisScript(this.redis, RELEASE, [this.key(`lease:${id}:${tickAtMs}`)], [holder]);
    } catch (error) {
      throw redisFailure("failed to release a schedule tick's lease", { scheduleId: id }, error);
    }
  }

  async ping(): Promise<boolean> {
    try {
      await this.redis.hlen(this.key('all'));
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {}
}

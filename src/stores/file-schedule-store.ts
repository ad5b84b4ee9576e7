import type { z } from 'zod';
import { CodeError } from '../errors.js';
import {
  ScheduleRecordSchema,
  ScheduleTickStateSchema,
  type ScheduleRecord,
  type ScheduleTickState,
} from '../protocol/schedules.js';
import type { ScheduleCreateOutcome, ScheduleStore } from '../runtime/ports/schedule-store.js';
import { JsonFileDirectory } from './json-file-directory.js';
import { KeyedLock } from './keyed-lock.js';
import { LocalTickLeases } from './memory-schedule-store.js';

/** Schedule ids as the server makes them (HostEnv `sch_<hex>`): the only file names the store reads. */
const SCHEDULE_ID = /^sch_[0-9a-f]{8,64}$/;

function parser<T>(schema: z.ZodType<T>, what: string): (raw: unknown, source: string) => T {
  return (raw, source) => {
    const parsed = schema.safeParse(raw);
    if (!parsed.success) throw new CodeError('SNAPSHOT_INVALID', `${source} is not a valid ${what}`, { source });
    return parsed.data;
  };
}

const parseSchedule = parser(ScheduleRecordSchema, 'schedule');
const parseTicks = parser(ScheduleTickStateSchema, 'schedule tick state');

/**
 * ScheduleStore on the local file system (the embedded default): `<dir>/schedules/<id>.json` and the tick states in
 * `<dir>/schedule-ticks/<id>.json`, each written atomically; one node, so tick leases are this process's.
 */
export class FileScheduleStore implements ScheduleStore {
  readonly kind = 'file';
  private readonly schedules: JsonFileDirectory;
  private readonly tickStates: JsonFileDirectory;
  private readonly leases = new LocalTickLeases();
  // Creations and deletions one at a time: the per-tenant count and the name check see every earlier one.
  private readonly lock = new KeyedLock();

  constructor(dir: string) {
    const common = { storeName: 'file schedule store', owner: 'schedule', idKey: 'scheduleId', idPattern: SCHEDULE_ID };
    this.schedules = new JsonFileDirectory({ ...common, dir: `${dir}/schedules`, record: 'schedule' });
    this.tickStates = new JsonFileDirectory({ ...common, dir: `${dir}/schedule-ticks`, record: 'schedule tick state' });
  }

  async init(): Promise<void> {
    await this.schedules.init();
    await this.tickStates.init();
  }

  create(schedule: ScheduleRecord, maxPerTenant: number): Promise<ScheduleCreateOutcome> {
    return this.lock.run('schedules', async () => {
      const tenant = await this.list(schedule.owner.tenantId);
      if (tenant.some((s) => s.name === schedule.name)) return 'exists';
      if (tenant.length >= maxPerTenant) return 'limit';
      await this.schedules.write(schedule.id, JSON.stringify(schedule));
      return 'created';
    });
  }

  update(schedule: ScheduleRecord): Promise<boolean> {
    return this.lock.run('schedules', async () => {
      if (!(await this.get(schedule.id))) return false;
      await this.schedules.write(schedule.id, JSON.stringify(schedule));
      return true;
    });
  }

  get(id: string): Promise<ScheduleRecord | undefined> {
    return this.schedules.read(id, parseSchedule, (s) => s.id);
  }

  /** Every readable schedule: one file that fails its schema is left out (GET answers it), not every schedule. */
  async list(tenantId?: string): Promise<ScheduleRecord[]> {
    const out: ScheduleRecord[] = [];
    for (const id of await this.schedules.ids()) {
      let schedule: ScheduleRecord | undefined;
      try {
        schedule = await this.get(id);
      } catch (error) {
        if (error instanceof CodeError && error.code === 'SNAPSHOT_INVALID') continue;
        throw error;
      }
      if (schedule && (tenantId === undefined || schedule.owner.tenantId === tenantId)) out.push(schedule);
    }
    return out;
  }

  delete(id: string): Promise<boolean> {
    return this.lock.run('schedules', async () => {
      const found = (await this.get(id)) !== undefined;
      await this.schedules.remove(id);
      await this.tickStates.remove(id);
      return found;
    });
  }

  /** A damaged tick state reads as none: the next tick follows catchUp, and a run it retries is found by its key. */
  async ticks(id: string): Promise<ScheduleTickState | undefined> {
    try {
      return await this.tickStates.read(id, parseTicks, (s) => s.id);
    } catch (error) {
      if (error instanceof CodeError && error.code === 'SNAPSHOT_INVALID') return undefined;
      throw error;
    }
  }

  putTicks(state: ScheduleTickState): Promise<void> {
    // Not for a schedule deleted meanwhile: its tick state would outlive it.
    return this.lock.run('schedules', async () => {
      if (await this.get(state.id)) await this.tickStates.write(state.id, JSON.stringify(state));
    });
  }

  async takeTickLease(id: string, tickAtMs: number, holder: string, ttlMs: number): Promise<boolean> {
    return this.leases.take(id, tickAtMs, holder, ttlMs);
  }

  async releaseTickLease(id: string, tickAtMs: number, holder: string): Promise<void> {
    this.leases.release(id, tickAtMs, holder);
  }

  ping(): Promise<boolean> {
    return this.schedules.ping();
  }

  async close(): Promise<void> {
    await this.schedules.close();
    await this.tickStates.close();
  }
}

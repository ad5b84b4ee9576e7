import type { ScheduleRecord, ScheduleTickState } from '../../protocol/schedules.js';

/** What creating a schedule found: it is stored, its tenant already has one of that name, or is at its limit. */
export type ScheduleCreateOutcome = 'created' | 'exists' | 'limit';

/**
 * Where schedules live, beside the session store and of the same kind: memory, files under `<data_dir>/schedules`,
 * or Redis (shared by every node). A schedule's tick state is kept apart from it, so a tick never rewrites an edit.
 */
export interface ScheduleStore {
  /** "memory", "file" or "redis". */
  readonly kind: string;
  /** Store a new schedule unless its tenant has one of that name or `maxPerTenant` already (atomically). */
  create(schedule: ScheduleRecord, maxPerTenant: number): Promise<ScheduleCreateOutcome>;
  /** Replace a stored schedule (an edit, a pause); false when it is gone. */
  update(schedule: ScheduleRecord): Promise<boolean>;
  get(id: string): Promise<ScheduleRecord | undefined>;
  /** Every tenant's schedules (the scheduler's scan), or one tenant's. */
  list(tenantId?: string): Promise<ScheduleRecord[]>;
  /** Remove a schedule and its tick state; false when there was none. */
  delete(id: string): Promise<boolean>;
  ticks(id: string): Promise<ScheduleTickState | undefined>;
  putTicks(state: ScheduleTickState): Promise<void>;
  /**
   * Take the lease of one tick of a schedule for `ttlMs` (Redis: SET NX PX), so one node runs it: false when another
   * holder has it. It is left to expire: a node that ran the tick has recorded it before anyone else can take it.
   */
  takeTickLease(id: string, tickAtMs: number, holder: string, ttlMs: number): Promise<boolean>;
  /** Give a tick's lease back early (the tick was left to another node), if `holder` still has it. */
  releaseTickLease(id: string, tickAtMs: number, holder: string): Promise<void>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

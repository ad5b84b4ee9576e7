import type { ScheduleRecord, ScheduleTickState } from '../protocol/schedules.js';
import type { ScheduleCreateOutcome, ScheduleStore } from '../runtime/ports/schedule-store.js';

/** Leases of ticks held in this process (one node: the memory and file stores), each until its deadline. */
export class LocalTickLeases {
  private readonly held = new Map<string, { holder: string; untilMs: number }>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  take(id: string, tickAtMs: number, holder: string, ttlMs: number): boolean {
    const key = `${id}:${tickAtMs}`;
    const now = this.now();
    for (const [other, lease] of this.held) if (lease.untilMs <= now) this.held.delete(other);
    if (this.held.has(key)) return false;
    this.held.set(key, { holder, untilMs: now + ttlMs });
    return true;
  }

  release(id: string, tickAtMs: number, holder: string): void {
    const key = `${id}:${tickAtMs}`;
    if (this.held.get(key)?.holder === holder) this.held.delete(key);
  }
}

/** ScheduleStore in this process (storage_backend "memory"): gone with it. */
export class MemoryScheduleStore implements ScheduleStore {
  readonly kind = 'memory';
  private readonly schedules = new Map<string, ScheduleRecord>();
  private readonly tickStates = new Map<string, ScheduleTickState>();
  private readonly leases = new LocalTickLeases();

  async create(schedule: ScheduleRecord, maxPerTenant: number): Promise<ScheduleCreateOutcome> {
    const tenant = [...this.schedules.values()].filter((s) => s.owner.tenantId === schedule.owner.tenantId);
    if (tenant.some((s) => s.name === schedule.name)) return 'exists';
    if (tenant.length >= maxPerTenant) return 'limit';
    this.schedules.set(schedule.id, structuredClone(schedule));
    return 'created';
  }

  async update(schedule: ScheduleRecord): Promise<boolean> {
    if (!this.schedules.has(schedule.id)) return false;
    this.schedules.set(schedule.id, structuredClone(schedule));
    return true;
  }

  async get(id: string): Promise<ScheduleRecord | undefined> {
    const found = this.schedules.get(id);
    return found && structuredClone(found);
  }

  async list(tenantId?: string): Promise<ScheduleRecord[]> {
    return [...this.schedules.values()]
      .filter((s) => tenantId === undefined || s.owner.tenantId === tenantId)
      .map((s) => structuredClone(s));
  }

  async delete(id: string): Promise<boolean> {
    this.tickStates.delete(id);
    return this.schedules.delete(id);
  }

  async ticks(id: string): Promise<ScheduleTickState | undefined> {
    const found = this.tickStates.get(id);
    return found && structuredClone(found);
  }

  async putTicks(state: ScheduleTickState): Promise<void> {
    if (this.schedules.has(state.id)) this.tickStates.set(state.id, structuredClone(state));
  }

  async takeTickLease(id: string, tickAtMs: number, holder: string, ttlMs: number): Promise<boolean> {
    return this.leases.take(id, tickAtMs, holder, ttlMs);
  }

  async releaseTickLease(id: string, tickAtMs: number, holder: string): Promise<void> {
    this.leases.release(id, tickAtMs, holder);
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}
}

import type { z } from 'zod';
import type {
  CreateScheduleRequestSchema,
  Schedule,
  ScheduleTriggerResponseSchema,
  UpdateScheduleRequestSchema,
} from '../protocol/schedules.js';
import { seg, type HttpTransport } from './http-transport.js';

/** What POST /v1/schedules takes (overlap and catchUp default to "skip" and "none", session to a template of `{}`). */
export type ScheduleInput = z.input<typeof CreateScheduleRequestSchema>;
/** What PATCH /v1/schedules/:id takes. */
export type ScheduleUpdate = z.input<typeof UpdateScheduleRequestSchema>;
/** What a trigger did: its tick, and its run when it started or queued one. */
export type ScheduleTriggerResult = z.infer<typeof ScheduleTriggerResponseSchema>;

/** The schedules of the client's tenant (docs/schedules.md); errors are the typed client errors. */
export class ScheduleClient {
  constructor(private readonly transport: HttpTransport) {}

  /** Create a schedule, run as this client's token (ScheduleExistsError for a taken name, QuotaExceededError past the limit). */
  async create(input: ScheduleInput): Promise<Schedule> {
    return (await this.transport.post<{ schedule: Schedule }>('/v1/schedules', input)).schedule;
  }

  /** The tenant's schedules, oldest first. */
  async list(): Promise<Schedule[]> {
    return (await this.transport.get<{ schedules: Schedule[] }>('/v1/schedules')).schedules;
  }

  /** One schedule (ScheduleNotFoundError when the tenant has none of that id). */
  async get(id: string): Promise<Schedule> {
    return (await this.transport.get<{ schedule: Schedule }>(`/v1/schedules/${seg(id)}`)).schedule;
  }

  /** Edit a schedule (it then runs as this client's token), or pause and resume it. */
  async update(id: string, update: ScheduleUpdate): Promise<Schedule> {
    return (await this.transport.patch<{ schedule: Schedule }>(`/v1/schedules/${seg(id)}`, update)).schedule;
  }

  /** Stop a schedule's ticks. */
  pause(id: string): Promise<Schedule> {
    return this.update(id, { paused: true });
  }

  /** Start a paused schedule's ticks again (from the next cron time on). */
  resume(id: string): Promise<Schedule> {
    return this.update(id, { paused: false });
  }

  /** Delete a schedule; the runs it started stay. */
  async delete(id: string): Promise<boolean> {
    return (await this.transport.delete<{ deleted: boolean }>(`/v1/schedules/${seg(id)}`)).deleted;
  }

  /** One tick now; `idempotencyKey` makes a retry answer the run the first call started. */
  trigger(id: string, options: { idempotencyKey?: string } = {}): Promise<ScheduleTriggerResult> {
    const headers = options.idempotencyKey !== undefined ? { 'idempotency-key': options.idempotencyKey } : undefined;
    return this.transport.post<ScheduleTriggerResult>(
      `/v1/schedules/${seg(id)}/trigger`,
      {},
      headers ? { headers } : {},
    );
  }
}

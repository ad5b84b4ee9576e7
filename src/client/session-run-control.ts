import type { z } from 'zod';
import type { SessionInfoSchema } from '../protocol/http.js';
import type { RunControlReceipt, RunControlSnapshot } from '../protocol/run-control.js';
import { toA3sError } from './a3s-error.js';
import { seg } from './http-transport.js';
import { sessionPath, type SessionContext } from './session-context.js';

/** The seed's steer options: which run (default the active one) and the turn it must still be. */
export interface SteerOptions {
  requestId: string;
  runId?: string;
  expectedTurnId?: string;
  expectedTurnRevision?: number;
  deadlineMs?: number;
}

/** The seed's interrupt options. */
export interface InterruptOptions {
  reason?: string;
  force?: boolean;
  runId?: string;
  requestId?: string;
}

/** Run control of a session's active run (the seed's steer, interrupt and runControlSnapshot). */
export class SessionRunControl {
  constructor(private readonly ctx: SessionContext) {}

  /** Queue input for the active run's next safe point (appended as a user message): its receipt. */
  async steer(input: string, options: SteerOptions): Promise<RunControlReceipt> {
    const { runId, ...rest } = options;
    const id = runId ?? (await this.activeRunId());
    const body = { input, ...rest };
    return (await this.ctx.transport.post<{ receipt: RunControlReceipt }>(this.runPath(id, '/steer'), body)).receipt;
  }

  /** Stop the active run at its next safe point (or now with `force`): its receipt. */
  async interrupt(options: InterruptOptions = {}): Promise<RunControlReceipt> {
    const { runId, ...body } = options;
    const id = runId ?? (await this.activeRunId());
    return (await this.ctx.transport.post<{ receipt: RunControlReceipt }>(this.runPath(id, '/interrupt'), body))
      .receipt;
  }

  /** The active run's (or `runId`'s) next turn id and revision, and the requests still waiting. */
  async runControlSnapshot(runId?: string): Promise<RunControlSnapshot> {
    const id = runId ?? (await this.activeRunId());
    return this.ctx.transport.get<RunControlSnapshot>(this.runPath(id, '/control'));
  }

  private runPath(runId: string, suffix: string): string {
    return sessionPath(this.ctx, `/runs/${seg(runId)}${suffix}`);
  }

  private async activeRunId(): Promise<string> {
    const info = (await this.ctx.transport.get<{ session: z.infer<typeof SessionInfoSchema> }>(sessionPath(this.ctx)))
      .session;
    if (info.currentRun === null)
      throw toA3sError('RUN_NOT_ACTIVE', `session ${this.ctx.sessionId} has no active run to control`, 409, {
        field: 'runId',
      });
    return info.currentRun.id;
  }
}

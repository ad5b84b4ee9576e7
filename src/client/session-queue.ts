import type { z } from 'zod';
import type { PendingConfirmationView } from '../protocol/governance.js';
import type { DeadLetter, ExternalTaskSnapshot, LaneHandlerMode, QueueStats } from '../protocol/queue.js';
import type { LaneHandlerResponseSchema, QueueInfoResponseSchema } from '../protocol/queue.js';
import type { QueueMetrics } from '../protocol/queue-metrics.js';
import type {
  ExternalVerificationReport,
  VerificationPreset,
  VerificationReport,
  VerificationRequestInput,
} from '../protocol/verification.js';
import type { VerificationSummaryResponse } from '../protocol/verification-summary.js';
import { seg } from './http-transport.js';
import { falseOn, sessionPath, type SessionContext } from './session-context.js';

/** Stats of one lane after setLaneHandler. */
export type LaneStats = z.infer<typeof LaneHandlerResponseSchema>['lane'];

/** Extras of confirmToolUse beyond the seed's arguments. */
export interface ConfirmOptions {
  /** With approved: true, allow later calls of the same tool and permission subject for the rest of the session. */
  always?: boolean;
  /** The confirmation's argsDigest as shown: the answer is refused if the pending call's arguments differ. */
  argsDigest?: string;
}

/** The session's lane queue, confirmations and verification reports (the seed's method names). */
export class SessionQueue {
  constructor(private readonly ctx: SessionContext) {}

  private path(suffix: string): string {
    return sessionPath(this.ctx, suffix);
  }

  /** True when the session was created with queueConfig. */
  async hasQueue(): Promise<boolean> {
    return (await this.ctx.transport.get<z.infer<typeof QueueInfoResponseSchema>>(this.path('/queue'))).hasQueue;
  }

  /** Lane queue stats (QueueNotConfiguredError without queueConfig). */
  queueStats(): Promise<QueueStats> {
    return this.ctx.transport.get<QueueStats>(this.path('/queue/stats'));
  }

  /** Lane queue metrics, null with metrics off. */
  async queueMetrics(): Promise<QueueMetrics | null> {
    return (await this.ctx.transport.get<{ metrics: QueueMetrics | null }>(this.path('/queue/metrics'))).metrics;
  }

  /** Dead-lettered calls, oldest first. */
  async deadLetters(): Promise<DeadLetter[]> {
    return (await this.ctx.transport.get<{ deadLetters: DeadLetter[] }>(this.path('/queue/dead-letters'))).deadLetters;
  }

  /** Set a lane's handler mode (internal, external, hybrid) and the host's timeout. */
  async setLaneHandler(lane: string, config: { mode: LaneHandlerMode; timeoutMs?: number }): Promise<LaneStats> {
    return (await this.ctx.transport.put<{ lane: LaneStats }>(this.path(`/queue/lanes/${seg(lane)}`), config)).lane;
  }

  /** External tasks awaiting the host. */
  async pendingExternalTasks(): Promise<ExternalTaskSnapshot[]> {
    return (await this.ctx.transport.get<{ tasks: ExternalTaskSnapshot[] }>(this.path('/queue/external-tasks'))).tasks;
  }

  /** Complete an external task: true when settled, false for an id never handed out (the seed's boolean). */
  async completeExternalTask(
    taskId: string,
    answer: { success: boolean; result?: unknown; error?: string },
  ): Promise<boolean> {
    return (
      (await falseOn(['EXTERNAL_TASK_NOT_FOUND'], () =>
        this.ctx.transport.post(this.path(`/queue/external-tasks/${seg(taskId)}`), answer),
      )) !== false
    );
  }

  /** Pending human confirmations with their remaining time. */
  async pendingConfirmations(): Promise<PendingConfirmationView[]> {
    return (await this.ctx.transport.get<{ confirmations: PendingConfirmationView[] }>(this.path('/confirmations')))
      .confirmations;
  }

  /** Reject every pending confirmation (the seed's cancelConfirmations): the number cancelled, 0 when none. */
  async cancelConfirmations(): Promise<number> {
    return (await this.ctx.transport.delete<{ cancelled: number }>(this.path('/confirmations'))).cancelled;
  }

  /**
   * Answer a pending confirmation: true when this answer settled it. Beside the seed's three arguments,
   * `options.always` (with approved: true) is "allow always" for the rest of the session, and
   * `options.argsDigest` pins the answer to the arguments it was shown (a changed call is refused).
   */
  async confirmToolUse(
    toolId: string,
    approved: boolean,
    reason?: string,
    options: ConfirmOptions = {},
  ): Promise<boolean> {
    const body = {
      approved,
      ...(reason !== undefined ? { reason } : {}),
      ...(options.always !== undefined ? { always: options.always } : {}),
      ...(options.argsDigest !== undefined ? { argsDigest: options.argsDigest } : {}),
    };
    await this.ctx.transport.post(this.path(`/confirmations/${seg(toolId)}`), body);
    return true;
  }

  /** Run verification commands host-direct and keep their report: the seed's `verifyCommands(subject, commands)`, or the body `{subject, commands}`. */
  verifyCommands(
    subjectOrRequest: string | VerificationRequestInput,
    commands?: VerificationRequestInput['commands'],
  ): Promise<VerificationReport> {
    const request =
      typeof subjectOrRequest === 'string' ? { subject: subjectOrRequest, commands: commands ?? [] } : subjectOrRequest;
    return this.ctx.transport.post<VerificationReport>(this.path('/verifications'), request);
  }

  /** The session's verification reports, oldest first. */
  async verificationReports(): Promise<VerificationReport[]> {
    return (await this.ctx.transport.get<{ reports: VerificationReport[] }>(this.path('/verifications'))).reports;
  }

  /**
   * Keep reports produced elsewhere (the seed's recordVerificationReports: void; needs host_direct): each
   * `{subject, status, checks, residual_risks?}` as given, so they count in the summary.
   */
  async recordVerificationReports(reports: ExternalVerificationReport[]): Promise<void> {
    await this.ctx.transport.post(this.path('/verifications/reports'), { reports });
  }

  /** The seed's VerificationSummary of the session's reports (with `text` and the AgentResult fields). */
  verificationSummary(): Promise<VerificationSummaryResponse> {
    return this.ctx.transport.get<VerificationSummaryResponse>(this.path('/verifications/summary'));
  }

  /** The summary's text (formatVerificationSummary). */
  async verificationSummaryText(): Promise<string> {
    return (await this.verificationSummary()).text;
  }

  /** Verification presets detected from the workspace files. */
  async verificationPresets(): Promise<VerificationPreset[]> {
    return (await this.ctx.transport.get<{ presets: VerificationPreset[] }>(this.path('/verifications/presets')))
      .presets;
  }
}

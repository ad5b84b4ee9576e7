import { createHash } from 'node:crypto';
import { CodeError } from '../../errors.js';
import type { HostEnv } from '../ports/host-env.js';

/** A pending confirmation as listed by GET .../confirmations. */
export interface PendingConfirmation {
  toolId: string;
  toolName: string;
  args: unknown;
  argsDigest: string;
  runId: string | undefined;
  createdAtMs: number;
  timeoutMs: number;
  remainingMs: number;
}

/** How a confirmation ended. */
export interface ConfirmationOutcome {
  approved: boolean;
  reason?: string;
  /** Set when the timeout decided (approved then reflects timeoutAction). */
  timedOut: boolean;
}

/** A confirmation request from the tool invoker. */
export interface ConfirmationRequest {
  toolId: string;
  toolName: string;
  args: unknown;
  runId?: string;
  timeoutMs: number;
  timeoutAction: 'reject' | 'auto_approve';
  signal: AbortSignal;
  /** Called once when the request is registered (emits confirmation_required). */
  onRequested(pending: PendingConfirmation): void;
}

interface Entry {
  pending: Omit<PendingConfirmation, 'remainingMs'>;
  settle(outcome: ConfirmationOutcome): void;
}

const MAX_SETTLED = 10_000;

/** A stable digest of tool arguments, binding an approval to the exact call. */
export function argsDigest(toolName: string, args: unknown): string {
  return createHash('sha256').update(`${toolName}\u0000${JSON.stringify(args ?? null)}`).digest('hex');
}

/**
 * Human confirmation state of one session: pending requests keyed by tool id, each settled exactly once
 * by an answer, its timeout, or cancellation. Unknown ids are NOT_FOUND; settled ids are CONFIRMATION_SETTLED.
 */
export class ConfirmationBroker {
  private readonly pending = new Map<string, Entry>();
  private readonly settled = new Set<string>();

  constructor(private readonly hostEnv: HostEnv) {}

  /** Ask for a confirmation and wait for its outcome. */
  request(request: ConfirmationRequest): Promise<ConfirmationOutcome> {
    if (this.pending.has(request.toolId) || this.settled.has(request.toolId)) {
      return Promise.resolve({ approved: false, reason: `tool id ${request.toolId} was already used for a confirmation`, timedOut: false });
    }
    if (request.signal.aborted) return Promise.resolve({ approved: false, reason: 'cancelled', timedOut: false });
    return new Promise<ConfirmationOutcome>((resolve) => {
      const createdAtMs = this.hostEnv.now();
      const pending = { toolId: request.toolId, toolName: request.toolName, args: request.args, argsDigest: argsDigest(request.toolName, request.args), runId: request.runId, createdAtMs, timeoutMs: request.timeoutMs };
      const finish = (outcome: ConfirmationOutcome) => {
        if (!this.pending.has(request.toolId)) return;
        this.pending.delete(request.toolId);
        this.remember(request.toolId);
        clearTimeout(timer);
        request.signal.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const timer = setTimeout(() => finish({ approved: request.timeoutAction === 'auto_approve', reason: `no answer within ${request.timeoutMs} ms`, timedOut: true }), request.timeoutMs);
      const onAbort = () => finish({ approved: false, reason: 'cancelled', timedOut: false });
      request.signal.addEventListener('abort', onAbort, { once: true });
      this.pending.set(request.toolId, { pending, settle: finish });
      request.onRequested({ ...pending, remainingMs: request.timeoutMs });
    });
  }

  /** Answer a pending confirmation; the digest, when given, must match the pending call's arguments. */
  answer(toolId: string, answer: { approved: boolean; reason?: string; argsDigest?: string }): PendingConfirmation {
    const entry = this.pending.get(toolId);
    if (!entry) {
      if (this.settled.has(toolId)) throw new CodeError('CONFIRMATION_SETTLED', `confirmation ${toolId} was already settled`, { toolId });
      throw new CodeError('CONFIRMATION_NOT_FOUND', `no pending confirmation ${toolId}`, { toolId });
    }
    if (answer.argsDigest !== undefined && answer.argsDigest !== entry.pending.argsDigest) {
      throw new CodeError('CONFIRMATION_MISMATCH', `argsDigest does not match the pending call ${toolId}`, { toolId, field: 'argsDigest' });
    }
    const listed = this.view(entry);
    entry.settle({ approved: answer.approved, ...(answer.reason !== undefined ? { reason: answer.reason } : {}), timedOut: false });
    return listed;
  }

  /** Pending confirmations with their remaining time. */
  list(): PendingConfirmation[] {
    return [...this.pending.values()].map((e) => this.view(e));
  }

  /** Reject every pending confirmation (cancel, close). */
  rejectAll(reason: string): void {
    for (const entry of [...this.pending.values()]) entry.settle({ approved: false, reason, timedOut: false });
  }

  private view(entry: Entry): PendingConfirmation {
    const elapsed = this.hostEnv.now() - entry.pending.createdAtMs;
    return { ...entry.pending, remainingMs: Math.max(0, entry.pending.timeoutMs - elapsed) };
  }

  private remember(toolId: string): void {
    this.settled.add(toolId);
    if (this.settled.size > MAX_SETTLED) {
      const oldest = this.settled.values().next().value;
      if (oldest !== undefined) this.settled.delete(oldest);
    }
  }
}

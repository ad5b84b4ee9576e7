import { createHash } from 'node:crypto';
import { CodeError } from '../../errors.js';
import type { HostEnv } from '../ports/host-env.js';
import type { PermissionGrantRequest } from './permission-grant.js';

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
  /** True when "allow always" for this call needs host_direct (the operator's policy asks for it); otherwise it acts as allow once. */
  alwaysNeedsHostDirect?: boolean;
}

/** A settled confirmation as answer() returns it: the pending call, and whether the answer added an "allow always" grant. */
export interface AnsweredConfirmation extends PendingConfirmation {
  alwaysGranted: boolean;
}

/** An answer to a pending confirmation. */
export interface ConfirmationAnswer {
  approved: boolean;
  reason?: string;
  argsDigest?: string;
  /** Approve this call and grant later calls with the same tool and permission subject for the rest of the session. */
  always?: boolean;
  /** The answerer holds host_direct: its "always" may grant what the operator's policy asks about. */
  mayPassFloor?: boolean;
}

/** How a confirmation ended. */
export interface ConfirmationOutcome {
  approved: boolean;
  reason?: string;
  /** Set when the timeout decided (approved then reflects timeoutAction). */
  timedOut: boolean;
  /** Set when a cancel settled it (the run's signal, or rejectAll on cancel and close), not an answer. */
  cancelled?: true;
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
  /** What an "allow always" answer would grant (absent: "always" acts as allow once). */
  grant?: PermissionGrantRequest;
  /** Called once when the request is registered (emits confirmation_required). */
  onRequested(pending: PendingConfirmation): void;
}

interface Entry {
  pending: Omit<PendingConfirmation, 'remainingMs'>;
  grant: PermissionGrantRequest | undefined;
  settle(outcome: ConfirmationOutcome): void;
}

const MAX_SETTLED = 10_000;

/** "Allow always" grants one session keeps; beyond it the oldest grant is forgotten (that call asks again). */
export const MAX_PERMISSION_GRANTS = 1000;

/** A stable digest of tool arguments, binding an approval to the exact call. */
export function argsDigest(toolName: string, args: unknown): string {
  return createHash('sha256')
    .update(`${toolName}\u0000${JSON.stringify(args ?? null)}`)
    .digest('hex');
}

/**
 * Human confirmation state of one session: pending requests keyed by tool id, each settled exactly once
 * by an answer, its timeout, or cancellation. Unknown ids are NOT_FOUND; settled ids are CONFIRMATION_SETTLED.
 * "Allow always" is defined here for every surface: it approves the call and adds a session-scoped grant for the
 * same tool and permission subject (isGranted), and approves the other pending calls the grant covers; an answerer
 * without host_direct cannot grant a call the operator's policy asks about (there "always" is allow once).
 */
export class ConfirmationBroker {
  // Created on first use: most sessions never ask for a confirmation.
  private pending: Map<string, Entry> | undefined;
  private settled: Set<string> | undefined;
  private grants: Set<string> | undefined;

  constructor(private readonly hostEnv: HostEnv) {}

  /** Ask for a confirmation and wait for its outcome. */
  request(request: ConfirmationRequest): Promise<ConfirmationOutcome> {
    const pending = (this.pending ??= new Map());
    if (pending.has(request.toolId) || this.settled?.has(request.toolId)) {
      return Promise.resolve({
        approved: false,
        reason: `tool id ${request.toolId} was already used for a confirmation`,
        timedOut: false,
      });
    }
    if (request.signal.aborted)
      return Promise.resolve({ approved: false, reason: 'cancelled', timedOut: false, cancelled: true });
    return new Promise<ConfirmationOutcome>((resolve) => {
      const createdAtMs = this.hostEnv.now();
      const call = {
        toolId: request.toolId,
        toolName: request.toolName,
        args: request.args,
        argsDigest: argsDigest(request.toolName, request.args),
        runId: request.runId,
        createdAtMs,
        timeoutMs: request.timeoutMs,
        alwaysNeedsHostDirect: request.grant?.floorAsks ?? true,
      };
      const finish = (outcome: ConfirmationOutcome) => {
        if (!pending.has(request.toolId)) return;
        pending.delete(request.toolId);
        this.remember(request.toolId);
        clearTimeout(timer);
        request.signal.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const timer = setTimeout(
        () =>
          finish({
            approved: request.timeoutAction === 'auto_approve',
            reason: `no answer within ${request.timeoutMs} ms`,
            timedOut: true,
          }),
        request.timeoutMs,
      );
      const onAbort = () => finish({ approved: false, reason: 'cancelled', timedOut: false, cancelled: true });
      request.signal.addEventListener('abort', onAbort, { once: true });
      pending.set(request.toolId, { pending: call, grant: request.grant, settle: finish });
      request.onRequested({ ...call, remainingMs: request.timeoutMs });
    });
  }

  /** Answer a pending confirmation; the digest, when given, must match the pending call's arguments. */
  answer(toolId: string, answer: ConfirmationAnswer): AnsweredConfirmation {
    const entry = this.pending?.get(toolId);
    if (!entry) {
      if (this.settled?.has(toolId))
        throw new CodeError('CONFIRMATION_SETTLED', `confirmation ${toolId} was already settled`, { toolId });
      throw new CodeError('CONFIRMATION_NOT_FOUND', `no pending confirmation ${toolId}`, { toolId });
    }
    if (answer.argsDigest !== undefined && answer.argsDigest !== entry.pending.argsDigest) {
      throw new CodeError('CONFIRMATION_MISMATCH', `argsDigest does not match the pending call ${toolId}`, {
        toolId,
        field: 'argsDigest',
      });
    }
    const listed = this.view(entry);
    entry.settle({
      approved: answer.approved,
      ...(answer.reason !== undefined ? { reason: answer.reason } : {}),
      timedOut: false,
    });
    const grant = entry.grant;
    const alwaysGranted =
      answer.approved &&
      answer.always === true &&
      grant !== undefined &&
      (!grant.floorAsks || answer.mayPassFloor === true);
    if (alwaysGranted) this.addGrant(grant.key);
    return { ...listed, alwaysGranted };
  }

  /** True when an "allow always" answer earlier in this session granted this tool and permission subject. */
  isGranted(key: string): boolean {
    return this.grants?.has(key) ?? false;
  }

  /** The session's "allow always" grant keys, oldest first (saved in its snapshot: they survive restart and takeover). */
  grantKeys(): string[] {
    return this.grants ? [...this.grants] : [];
  }

  /** Hold these grants again (a restored session's, from its snapshot), oldest first; pending calls are not touched. */
  restoreGrants(keys: readonly string[]): void {
    if (keys.length === 0) return;
    const grants = (this.grants ??= new Set());
    for (const key of keys.slice(-MAX_PERMISSION_GRANTS)) {
      grants.delete(key);
      grants.add(key);
    }
  }

  /** The number of "allow always" grants this session holds. */
  get grantCount(): number {
    return this.grants?.size ?? 0;
  }

  /** Pending confirmations with their remaining time. */
  list(): PendingConfirmation[] {
    return this.pending ? [...this.pending.values()].map((e) => this.view(e)) : [];
  }

  /** Reject every pending confirmation (cancel, close); answers how many there were. */
  rejectAll(reason: string): number {
    const entries = [...(this.pending?.values() ?? [])];
    for (const entry of entries) entry.settle({ approved: false, reason, timedOut: false, cancelled: true });
    return entries.length;
  }

  private addGrant(key: string): void {
    const grants = (this.grants ??= new Set());
    grants.delete(key);
    grants.add(key);
    if (grants.size > MAX_PERMISSION_GRANTS) {
      const oldest = grants.values().next().value;
      if (oldest !== undefined) grants.delete(oldest);
    }
    // Other pending calls the grant covers pass now, as later ones will.
    for (const other of [...(this.pending?.values() ?? [])]) {
      if (other.grant?.key === key) other.settle({ approved: true, reason: 'allowed always', timedOut: false });
    }
  }

  private view(entry: Entry): PendingConfirmation {
    const elapsed = this.hostEnv.now() - entry.pending.createdAtMs;
    return { ...entry.pending, remainingMs: Math.max(0, entry.pending.timeoutMs - elapsed) };
  }

  private remember(toolId: string): void {
    const settled = (this.settled ??= new Set());
    settled.add(toolId);
    if (settled.size > MAX_SETTLED) {
      const oldest = settled.values().next().value;
      if (oldest !== undefined) settled.delete(oldest);
    }
  }
}

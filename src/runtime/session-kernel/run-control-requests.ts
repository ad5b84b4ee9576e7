import type { ChatMessage } from '../../protocol/chat-message.js';
import type { RunControlReceipt, RunControlSnapshot, SteerBody } from '../../protocol/run-control.js';
import type { SafePointStop } from '../loop/safe-point-stop.js';

/** Where an applied request is told (the run's producer emits run_control_applied). */
export interface RunControlSink {
  applied(payload: {
    request_id: string;
    operation: 'steer' | 'interrupt';
    turn_id: string;
    turn_revision: number;
    input?: string;
    reason?: string;
  }): void;
}

interface PendingSteer {
  receipt: RunControlReceipt;
  input: string;
  expiresAtMs: number | undefined;
}

/** Most requests one run remembers (their receipts answer retries); past it the oldest settled ones go. */
const MAX_RECEIPTS = 1000;
/**
 * Most requests waiting for one safe point (accepted, not yet applied): one more is rejected, so a flood of
 * steers or interrupts with new request ids never holds more memory (nor adds more user messages) than this.
 */
export const MAX_WAITING_REQUESTS = 100;

/**
 * One run's steer and interrupt requests (the seed's run control): steers wait for the next safe point (before
 * the next provider call: after the tool round in flight, or before the first turn) and are appended there as
 * user messages; an interrupt stops the run there. Idempotent by requestId. It is the loop's SafePointStop:
 * `reason`, once set (an interrupt, or multitaskStrategy interrupt), stops the run at the next safe point.
 */
export class RunControlRequests implements SafePointStop {
  /** Set by an interrupt: the loop stops at its next safe point with this reason. */
  reason: string | undefined;
  /** The turn the next safe point comes before; its revision counts the steers accepted for it. */
  private nextTurn = 1;
  private revision = 0;
  private readonly receipts = new Map<string, RunControlReceipt>();
  private readonly steers: PendingSteer[] = [];
  private interruptId: string | undefined;
  /** The forced interrupt that stopped the run, once one did. */
  private forcedId: string | undefined;
  private ended = false;

  constructor(
    readonly runId: string,
    private readonly now: () => number,
    /** Where applied requests are told (run_control_applied). */
    private readonly sink: RunControlSink,
  ) {}

  /** The next turn's id (`<runId>:<turn>`). */
  get turnId(): string {
    return `${this.runId}:${this.nextTurn}`;
  }

  /** Queue a steer for the next safe point (or answer the receipt of an earlier request with this id). */
  steer(body: SteerBody): RunControlReceipt {
    const known = this.receipts.get(body.requestId);
    if (known) return { ...known };
    const stale =
      body.expectedTurnId !== undefined && body.expectedTurnId !== this.turnId
        ? `expectedTurnId ${body.expectedTurnId} is not the run's next turn ${this.turnId}`
        : body.expectedTurnRevision !== undefined && body.expectedTurnRevision !== this.revision
          ? `expectedTurnRevision ${body.expectedTurnRevision} is not the next turn's revision ${this.revision}`
          : this.full();
    const status = this.ended ? 'settled' : stale !== undefined ? 'rejected' : 'accepted';
    if (status === 'accepted') this.revision += 1;
    const receipt: RunControlReceipt = {
      requestId: body.requestId,
      operation: 'steer',
      status,
      ...(this.ended ? { reason: 'the run has ended' } : stale !== undefined ? { reason: stale } : {}),
      turnId: this.turnId,
      turnRevision: this.revision,
    };
    this.remember(receipt);
    if (status === 'accepted')
      this.steers.push({
        receipt,
        input: body.input,
        expiresAtMs: body.deadlineMs !== undefined ? this.now() + body.deadlineMs : undefined,
      });
    return { ...receipt };
  }

  /** Ask the run to stop at its next safe point (the first interrupt's reason wins). */
  interrupt(requestId: string, reason: string): RunControlReceipt {
    const known = this.receipts.get(requestId);
    if (known) return { ...known };
    const full = this.ended ? undefined : this.full();
    const receipt: RunControlReceipt = {
      requestId,
      operation: 'interrupt',
      status: this.ended ? 'settled' : full !== undefined ? 'rejected' : 'accepted',
      reason: full ?? reason,
      turnId: this.turnId,
      turnRevision: this.revision,
    };
    this.remember(receipt);
    if (!this.ended && full === undefined && this.reason === undefined) {
      this.reason = reason;
      this.interruptId = requestId;
    }
    return { ...receipt };
  }

  /**
   * A forced interrupt: applied now (the caller aborts the run), told as applied at once. Only the first one stops
   * the run: one more while the run is stopping is settled, naming the one that applied (nothing told twice).
   */
  forceInterrupt(requestId: string, reason: string): RunControlReceipt {
    const known = this.receipts.get(requestId);
    if (known) return { ...known };
    const stopping =
      this.forcedId !== undefined ? `the run is already stopping (interrupt ${this.forcedId})` : undefined;
    const receipt: RunControlReceipt = {
      requestId,
      operation: 'interrupt',
      status: this.ended || stopping !== undefined ? 'settled' : 'applied',
      reason: stopping ?? reason,
      turnId: this.turnId,
      turnRevision: this.revision,
    };
    this.remember(receipt);
    if (!this.ended && stopping === undefined) {
      this.forcedId = requestId;
      this.reason ??= reason;
      this.sink.applied({
        request_id: requestId,
        operation: 'interrupt',
        turn_id: this.turnId,
        turn_revision: this.revision,
        reason,
      });
    }
    return { ...receipt };
  }

  /**
   * The loop is at a safe point before turn `turn`: the steers to append (as user messages, in order), each
   * applied (run_control_applied); an expired one is rejected instead. An interrupt is applied here too.
   */
  atSafePoint(turn: number): ChatMessage[] {
    this.nextTurn = turn;
    const messages: ChatMessage[] = [];
    const at = this.now();
    // An interrupted run takes no more input: its waiting steers are settled when it ends.
    for (const steer of this.reason === undefined ? this.steers.splice(0) : []) {
      if (steer.expiresAtMs !== undefined && at > steer.expiresAtMs) {
        this.update(steer.receipt, { status: 'rejected', reason: 'deadlineMs passed before a safe point' });
        continue;
      }
      this.update(steer.receipt, { status: 'applied', turnId: this.turnId, turnRevision: this.revision });
      messages.push({ role: 'user', content: steer.input });
      this.sink.applied({
        request_id: steer.receipt.requestId,
        operation: 'steer',
        turn_id: this.turnId,
        turn_revision: this.revision,
        input: steer.input,
      });
    }
    if (this.reason !== undefined && this.interruptId !== undefined) {
      const receipt = this.receipts.get(this.interruptId);
      if (receipt?.status === 'accepted') {
        this.update(receipt, { status: 'applied', turnId: this.turnId, turnRevision: this.revision });
        this.sink.applied({
          request_id: receipt.requestId,
          operation: 'interrupt',
          turn_id: this.turnId,
          turn_revision: this.revision,
          reason: this.reason,
        });
      }
    }
    // The turn is in flight now: the next safe point comes before the one after it, which no steer has touched.
    if (this.reason === undefined) {
      this.nextTurn = turn + 1;
      this.revision = 0;
    }
    return messages;
  }

  /** The run ended: what still waits is settled (never applied). */
  end(): void {
    this.ended = true;
    for (const receipt of this.receipts.values())
      if (receipt.status === 'accepted')
        this.update(receipt, { status: 'settled', reason: 'the run ended before a safe point' });
    this.steers.length = 0;
  }

  /** The seed's runControlSnapshot: the next turn's id and revision, and the requests still waiting. */
  snapshot(active: boolean): RunControlSnapshot {
    return {
      runId: this.runId,
      active,
      turnId: this.turnId,
      turnRevision: this.revision,
      pending: [...this.receipts.values()].filter((r) => r.status === 'accepted').map((r) => ({ ...r })),
    };
  }

  /** Why one more request cannot wait (MAX_WAITING_REQUESTS wait already), or undefined. */
  private full(): string | undefined {
    let waiting = 0;
    for (const receipt of this.receipts.values()) if (receipt.status === 'accepted') waiting += 1;
    return waiting >= MAX_WAITING_REQUESTS
      ? `${MAX_WAITING_REQUESTS} requests already wait for the run's next safe point`
      : undefined;
  }

  private update(receipt: RunControlReceipt, change: Partial<RunControlReceipt>): void {
    Object.assign(receipt, change);
  }

  private remember(receipt: RunControlReceipt): void {
    this.receipts.set(receipt.requestId, receipt);
    if (this.receipts.size <= MAX_RECEIPTS) return;
    for (const [id, old] of this.receipts)
      if (old.status !== 'accepted') {
        this.receipts.delete(id);
        return;
      }
  }
}

import { CodeError } from '../../errors.js';

/** Whether a session is open, why it closed, and whether another node took it over; what a stopped run keeps follows from these. */
export class SessionLifecycle {
  private closed = false;
  /** Why the session closed; a 'shutdown' keeps run checkpoints so the runs can be resumed. */
  private closeReason: string | undefined;
  /** Set when another node took the session over: nothing more is saved or published from here. */
  private abandonedFlag = false;

  constructor(private readonly sessionId: string) {}

  /** True once closed. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** True once another node took the session over. */
  get abandoned(): boolean {
    return this.abandonedFlag;
  }

  /** Throw SESSION_CLOSED when closed. */
  assertOpen(): void {
    const { sessionId } = this;
    if (this.closed) throw new CodeError('SESSION_CLOSED', `session ${sessionId} is closed`, { sessionId });
  }

  /** True when a client closed the session (DELETE), as opposed to shutdown, passivation or a lost lease. */
  get closedByClient(): boolean {
    return this.closeReason === 'closed';
  }

  /** Mark the session closed for `reason`; false when it already was. */
  close(reason: string): boolean {
    if (this.closed) return false;
    this.closed = true;
    this.closeReason = reason;
    return true;
  }

  /** Note that another node took the session over. */
  abandon(): void {
    this.abandonedFlag = true;
  }

  /** Runs stopped by shutdown, passivation or a lost lease keep their checkpoints: another process or node resumes them. */
  keepsCheckpoints(): boolean {
    return this.closeReason === 'shutdown' || this.closeReason === 'passivated' || this.closeReason === 'lost';
  }

  /** A run that ended is saved unless the session was abandoned, or closed other than for shutdown or passivation. */
  savesAfterRun(): boolean {
    return (
      !this.abandonedFlag && (!this.closed || this.closeReason === 'shutdown' || this.closeReason === 'passivated')
    );
  }
}

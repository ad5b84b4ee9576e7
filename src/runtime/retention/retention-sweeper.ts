import type { SessionKey } from '../../stores/session-key.js';
import { purgeStoredSession, type StoredSessionStores } from './purge-stored-session.js';

/** How often the sweep runs after the one at start. */
export const RETENTION_SWEEP_INTERVAL_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** What the sweep needs: the stores, the retention, a clock and the sessions live here (never swept). */
export interface RetentionSweeperDeps extends StoredSessionStores {
  /** config `retention.closed_session_days`. */
  readonly closedSessionDays: number;
  now(): number;
  /** True for a session live on this node (open: never swept, whatever its store says). */
  isLive(key: SessionKey): boolean;
  /** Told of every purged session (the tenant's stored bytes go to 0). */
  onPurged?(key: SessionKey): void;
  onError?(error: unknown): void;
}

/** What one sweep did. */
export interface SweepResult {
  scanned: number;
  purged: number;
}

/**
 * The retention of closed sessions (config `retention.closed_session_days`, off unless set): at start and
 * every hour, every stored session that a client closed (`session.closed`) and that was last saved (closing
 * saves it) more than that many days ago is deleted with its runs' checkpoints. Open sessions, and closed
 * ones reopened since, are never touched. A sweep reads each stored snapshot once.
 */
export class RetentionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<SweepResult> | undefined;

  constructor(private readonly deps: RetentionSweeperDeps) {}

  /** Sweep now, then every RETENTION_SWEEP_INTERVAL_MS (the timer never keeps the process alive). */
  start(): void {
    void this.sweep();
    this.timer = setInterval(() => void this.sweep(), RETENTION_SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  /** Stop the hourly sweep and wait for one in progress. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One sweep (a sweep already running is joined, not doubled). */
  sweep(): Promise<SweepResult> {
    this.running ??= this.sweepOnce().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async sweepOnce(): Promise<SweepResult> {
    const { store, closedSessionDays } = this.deps;
    const cutoff = this.deps.now() - closedSessionDays * DAY_MS;
    const result: SweepResult = { scanned: 0, purged: 0 };
    let keys: SessionKey[];
    try {
      keys = await store.list();
    } catch (error) {
      this.deps.onError?.(error);
      return result;
    }
    for (const key of keys) {
      if (this.deps.isLive(key)) continue;
      result.scanned += 1;
      try {
        const snapshot = await store.load(key);
        // Listed but gone (a closed Redis session expired by its TTL): its index entry goes too.
        if (!snapshot) await purgeStoredSession(this.deps, key);
        if (!snapshot?.session.closed || snapshot.saved_at_ms > cutoff) continue;
        if (await purgeStoredSession(this.deps, key, snapshot)) {
          result.purged += 1;
          this.deps.onPurged?.(key);
        }
      } catch (error) {
        this.deps.onError?.(error);
      }
    }
    return result;
  }
}

import type { FastifyBaseLogger } from 'fastify';

/** Lines one kind of client fault may log per window before the rest are counted instead. */
export const CLIENT_FAULT_LINES_PER_WINDOW = 5;

/** The window of CLIENT_FAULT_LINES_PER_WINDOW, in milliseconds. */
export const CLIENT_FAULT_WINDOW_MS = 10_000;

/** How loud a client fault is: `info` for plain mistakes, `warn` for what may be abuse (timeouts, caps, bad frames). */
export type ClientFaultLevel = 'info' | 'warn';

interface Window {
  started: number;
  lines: number;
  suppressed: number;
  level: ClientFaultLevel;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Logs the client's mistakes (4xx answers, malformed requests, timeouts, refused connections, bad WebSocket
 * frames) at info or warn, at most CLIENT_FAULT_LINES_PER_WINDOW lines per kind per window; past that it
 * counts them and logs one "suppressed K" line when the window ends. `error` stays for the server's own faults.
 */
export class ClientFaultLog {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly logger: FastifyBaseLogger,
    private readonly now: () => number = Date.now,
    private readonly linesPerWindow = CLIENT_FAULT_LINES_PER_WINDOW,
    private readonly windowMs = CLIENT_FAULT_WINDOW_MS,
  ) {}

  /** Log one fault of `kind` (e.g. `http:400:BAD_REQUEST`, `ws:frame`), unless its kind has used up its window. */
  log(kind: string, level: ClientFaultLevel, fields: Record<string, unknown>, message: string): void {
    const now = this.now();
    let window = this.windows.get(kind);
    if (window && now - window.started >= this.windowMs) {
      this.flush(kind, window);
      window = undefined;
    }
    if (!window) {
      window = { started: now, lines: 0, suppressed: 0, level, timer: undefined };
      this.windows.set(kind, window);
    }
    if (window.lines < this.linesPerWindow) {
      window.lines += 1;
      this.logger[level]({ ...fields, clientFault: kind }, message);
      return;
    }
    window.suppressed += 1;
    if (!window.timer) {
      const current = window;
      // The summary comes when the window ends even if no later fault of this kind arrives.
      current.timer = setTimeout(() => this.flush(kind, current), Math.max(0, current.started + this.windowMs - now));
      current.timer.unref();
    }
  }

  /** Log the pending "suppressed" summaries now (at shutdown) and forget every window. */
  close(): void {
    for (const [kind, window] of [...this.windows]) this.flush(kind, window);
  }

  private flush(kind: string, window: Window): void {
    clearTimeout(window.timer);
    if (this.windows.get(kind) === window) this.windows.delete(kind);
    if (window.suppressed === 0) return;
    this.logger[window.level](
      { clientFault: kind, suppressed: window.suppressed, windowMs: this.windowMs },
      `suppressed ${window.suppressed} more "${kind}" client faults in ${this.windowMs / 1000} s`,
    );
  }
}

const byLogger = new WeakMap<object, ClientFaultLog>();

/** The client fault log of a logger: one per logger, so every part of one server shares its rate limits. */
export function clientFaultLogFor(logger: FastifyBaseLogger): ClientFaultLog {
  let log = byLogger.get(logger);
  if (!log) {
    log = new ClientFaultLog(logger);
    byLogger.set(logger, log);
  }
  return log;
}

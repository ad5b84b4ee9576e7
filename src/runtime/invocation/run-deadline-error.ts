/** The abort reason of a run stopped by its maxExecutionTimeMs deadline (not a cancel). */
export class RunDeadlineError extends Error {
  constructor(readonly limitMs: number) {
    super(`the run exceeded maxExecutionTimeMs (${limitMs} ms)`);
    this.name = 'RunDeadlineError';
  }
}

/** The deadline error when a signal was aborted by the run's deadline, else undefined. */
export function deadlineReason(signal: AbortSignal): RunDeadlineError | undefined {
  return signal.aborted && signal.reason instanceof RunDeadlineError ? signal.reason : undefined;
}

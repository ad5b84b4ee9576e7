/**
 * The `a3s` exit codes (issue 16): what a CI step branches on. `run` and `resume` use 0 to 4 (`run --patch-out` also 5);
 * `verify` uses OK, FAILED and NEEDS_REVIEW; every other command OK, FAILED and USAGE.
 */
export const EXIT = {
  /** The run completed and its verification passed or was skipped (the command did what it was asked). */
  ok: 0,
  /** The run failed or was cancelled, verification failed, or the server refused the request. */
  failed: 1,
  /** Bad flags, a bad config or policy file, a missing token, or a request the server rejected as malformed or unauthorized. */
  usage: 2,
  /** A tool call waits for a human confirmation and `--approve` was not given. */
  confirmationNeeded: 3,
  /**
   * The agent asked the user a question (ask_user) and stdin is not a terminal to answer it on: the run keeps
   * waiting on the server (until the question's timeout) for `a3s answer`. The same code as a confirmation.
   */
  questionPending: 3,
  /** Verification needs review (or `--wait-verification` found no report). */
  needsReview: 4,
  /**
   * `run --patch-out`: the run completed (it would have exited 0) but changed no file (no change set, or an empty
   * one): nothing is written. A PR bot skips its pull request on it.
   */
  noChanges: 5,
} as const;

/** One of the exit codes. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

import type { AgentResult, RunStatus } from '../protocol/run-record.js';
import { EXIT, type ExitCode } from './exit-codes.js';

/**
 * The exit code of a finished run: 0 completed with verification passed or skipped, 1 failed or cancelled or
 * verification failed, 4 verification needs_review. With `requireReport` (`--wait-verification`) a run without
 * a report is not done: skipped answers 4.
 */
export function runExitCode(status: RunStatus, result: AgentResult | undefined, requireReport: boolean): ExitCode {
  if (status !== 'completed' || !result) return EXIT.failed;
  switch (result.verificationStatus) {
    case 'passed':
      return EXIT.ok;
    case 'skipped':
      return requireReport ? EXIT.needsReview : EXIT.ok;
    case 'needs_review':
      return EXIT.needsReview;
    case 'failed':
      return EXIT.failed;
  }
}

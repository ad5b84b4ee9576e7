import type { RunErrorCode } from '../../errors.js';

/** Why a command run failed: an unknown command, a command that could not produce its text, or (/compact) a hook or budget refusal. */
export class CommandFailure extends Error {
  constructor(
    readonly code: Extract<RunErrorCode, 'UNKNOWN_COMMAND' | 'COMMAND_FAILED' | 'BLOCKED_BY_HOOK' | 'BUDGET_EXHAUSTED'>,
    message: string,
  ) {
    super(message);
    this.name = 'CommandFailure';
  }
}

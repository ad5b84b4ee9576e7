/** Why a command run failed: an unknown command, or a command that could not produce its text. */
export class CommandFailure extends Error {
  constructor(
    readonly code: 'UNKNOWN_COMMAND' | 'COMMAND_FAILED',
    message: string,
  ) {
    super(message);
    this.name = 'CommandFailure';
  }
}

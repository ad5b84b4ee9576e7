/** A mistake of the person or script calling `a3s` (bad flags, bad config): one line on stderr, exit 2, no stack trace. */
export class UsageError extends Error {
  /** The command whose `--help` the message points to, when there is one. */
  readonly command: string | undefined;

  constructor(message: string, command?: string) {
    super(message);
    this.name = 'UsageError';
    this.command = command;
  }
}

import { acpCommand } from './acp-command.js';
import { answerCommand } from './answer-command.js';
import { approveCommand } from './approve-command.js';
import type { CliIo } from './cli-io.js';
import { diffCommand } from './diff-command.js';
import { webhooksCommand } from './webhooks-command.js';
import { eventsCommand } from './events-command.js';
import { EXIT } from './exit-codes.js';
import { forkCommand } from './fork-command.js';
import { HELP } from './help-text.js';
import { didYouMean } from './did-you-mean.js';
import { commandFirst } from './parse-flags.js';
import { packageVersion } from '../package-version.js';
import { reportError } from './report-error.js';
import { resumeCommand } from './resume-command.js';
import { revertCommand, unrevertCommand } from './revert-commands.js';
import { runCommand } from './run-command.js';
import { interruptCommand, steerCommand } from './run-control-commands.js';
import { sessionsCommand } from './sessions-command.js';
import { tokenCommand } from './token-command.js';
import { UsageError } from './usage-error.js';
import { verifyCommand } from './verify-command.js';

type Command = (args: readonly string[], io: CliIo) => Promise<number>;

const COMMANDS: Readonly<Record<string, Command>> = {
  run: runCommand,
  verify: verifyCommand,
  sessions: sessionsCommand,
  events: eventsCommand,
  approve: approveCommand,
  answer: answerCommand,
  steer: steerCommand,
  interrupt: interruptCommand,
  resume: resumeCommand,
  fork: forkCommand,
  diff: diffCommand,
  webhooks: webhooksCommand,
  revert: revertCommand,
  unrevert: unrevertCommand,
  acp: acpCommand,
  token: tokenCommand,
};

/** Flags that ask for help wherever they are (before a `--` that ends the flags). */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

/** `unknown command "rn" (did you mean run?)`, or with the list of commands when none is close. */
function unknownCommand(name: string): UsageError {
  const suggestion = didYouMean(name, Object.keys(COMMANDS));
  return new UsageError(`unknown command "${name}"${suggestion || ` (${Object.keys(COMMANDS).join(', ')})`}`, '');
}

/** Run `a3s <argv>` and answer the process's exit code; every failure is reported as one line on stderr. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const [name, ...args] = commandFirst(argv);
    if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
      const topic = name === 'help' ? args[0] : undefined;
      if (topic !== undefined && !(topic in COMMANDS)) throw unknownCommand(topic);
      // A bare `a3s` is a usage error: the help goes to stderr then.
      if (name === undefined) io.err(`${HELP['']}\n`);
      else io.out(`${HELP[topic ?? '']}\n`);
      return name === undefined ? EXIT.usage : EXIT.ok;
    }
    if (name === '--version' || name === '-v' || name === 'version') {
      io.out(`${packageVersion()}\n`);
      return EXIT.ok;
    }
    const command = COMMANDS[name];
    if (!command) throw unknownCommand(name);
    if (asksForHelp(args)) {
      io.out(`${HELP[name]}\n`);
      return EXIT.ok;
    }
    return await command(args, io);
  } catch (error) {
    return reportError(error, io);
  }
}

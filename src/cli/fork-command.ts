import type { CliIo } from './cli-io.js';
import { resolveCliConfig } from './cli-config.js';
import { connect } from './connect.js';
import { EXIT } from './exit-codes.js';
import { booleanFlag, integerFlag, parseFlags, positionalArgs, stringFlag, type FlagSpec } from './parse-flags.js';
import { UsageError } from './usage-error.js';

/** The flags of `a3s fork` (besides the global ones). */
export const FORK_FLAGS = {
  'at-run': { type: 'string' },
  'at-message': { type: 'string' },
  id: { type: 'string' },
  json: { type: 'boolean' },
} as const satisfies FlagSpec;

/**
 * `a3s fork SESSION [--at-run RUN_ID | --at-message N] [--id NEW] [--json]`: fork the session (POST .../fork) and
 * print the new session's id (its info as JSON with --json); where it came from goes to stderr.
 */
export async function forkCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags('fork', args, FORK_FLAGS);
  const [sessionId] = positionalArgs('fork', positionals, ['SESSION']);
  const atRunId = stringFlag(values, 'at-run');
  const atMessage = integerFlag('fork', values, 'at-message');
  if (atRunId !== undefined && atMessage !== undefined)
    throw new UsageError('--at-run and --at-message: give one of them, not both', 'fork');
  const newId = stringFlag(values, 'id');
  const client = connect(resolveCliConfig(values, io));
  const fork = await client.fork(sessionId, {
    ...(atRunId !== undefined ? { atRunId } : {}),
    ...(atMessage !== undefined ? { atMessage } : {}),
    ...(newId !== undefined ? { sessionId: newId } : {}),
  });
  const info = fork.created;
  const from = info.forkedFrom;
  if (from)
    io.err(
      `[fork] session ${info.id} from ${from.sessionId}${from.atRunId !== undefined ? ` before run ${from.atRunId}` : ''} (${from.atMessage} messages)\n`,
    );
  io.out(booleanFlag(values, 'json') ? `${JSON.stringify(info, null, 2)}\n` : `${info.id}\n`);
  return EXIT.ok;
}

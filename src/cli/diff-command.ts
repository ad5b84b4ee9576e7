import type { ChangeRange, ChangeSet } from '../client/index.js';
import { notCapturedNote, patchBytes, statLines } from './change-output.js';
import type { CliIo } from './cli-io.js';
import { resolveCliConfig } from './cli-config.js';
import { connect } from './connect.js';
import { EXIT } from './exit-codes.js';
import { booleanFlag, parseFlags, positionalArgs, stringFlag, type FlagSpec } from './parse-flags.js';
import { UsageError } from './usage-error.js';

/** The flags of `a3s diff` (besides the global ones). */
export const DIFF_FLAGS = {
  from: { type: 'string' },
  to: { type: 'string' },
  stat: { type: 'boolean' },
  json: { type: 'boolean' },
} as const satisfies FlagSpec;

/**
 * `a3s diff SESSION RUN` or `a3s diff SESSION --from R1 --to R2`: the run's (or the range's) patch on stdout, as
 * the server captured it (git's unified diff, binary included); `--stat` the changed files with their +/- counts,
 * `--json` the change set. Errors of the server (425 still running, 422 no change set, 404) exit 1.
 */
export async function diffCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags('diff', args, DIFF_FLAGS);
  const from = stringFlag(values, 'from');
  const to = stringFlag(values, 'to');
  const ranged = from !== undefined || to !== undefined;
  if (ranged && (from === undefined || to === undefined))
    throw new UsageError('a range needs both --from RUN and --to RUN', 'diff');
  const [sessionId, runId] = positionalArgs('diff', positionals, ranged ? ['SESSION'] : ['SESSION', 'RUN']);
  if (booleanFlag(values, 'stat') && booleanFlag(values, 'json'))
    throw new UsageError('--stat and --json: give one of them, not both', 'diff');
  const client = connect(resolveCliConfig(values, io));
  const changes: ChangeSet | ChangeRange = ranged
    ? await client.changesRange(sessionId!, { from: from!, to: to! })
    : await client.changes(sessionId!, runId!);
  if (booleanFlag(values, 'json')) {
    io.out(`${JSON.stringify(changes, null, 2)}\n`);
    return EXIT.ok;
  }
  io.err(notCapturedNote(changes));
  if (booleanFlag(values, 'stat')) {
    io.out(statLines(changes));
    return EXIT.ok;
  }
  if (changes.truncated) {
    io.err(
      `a3s: the patch (${changes.patch_bytes} bytes) was too large for the server to keep; "a3s diff --stat" lists its files\n`,
    );
    return EXIT.failed;
  }
  io.out(patchBytes(changes));
  return EXIT.ok;
}

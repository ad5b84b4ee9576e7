import { RevertConflictError, type RevertResponse } from '../client/index.js';
import type { CliIo } from './cli-io.js';
import { resolveCliConfig } from './cli-config.js';
import { connect } from './connect.js';
import { EXIT } from './exit-codes.js';
import { booleanFlag, parseFlags, positionalArgs, type FlagSpec, type FlagValues } from './parse-flags.js';

/** The flags of `a3s revert` and `a3s unrevert` (besides the global ones). */
export const REVERT_FLAGS = {
  force: { type: 'boolean' },
  json: { type: 'boolean' },
} as const satisfies FlagSpec;

/** How many conflicting paths are listed on stderr (the server sends at most 1,000; `details.count` has them all). */
const MAX_LISTED = 50;

/**
 * `a3s revert SESSION RUN [--force] [--json]`: revert run RUN of SESSION (POST .../runs/:runId/revert): its files
 * and every later run's back to before it, its messages hidden from the model. Prints each path written or removed
 * (the answer as JSON with --json), what was reverted on stderr. A conflict (409 REVERT_CONFLICT) exits 1 listing
 * the paths changed since on stderr; --force writes them anyway.
 */
export async function revertCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags('revert', args, REVERT_FLAGS);
  const [sessionId, runId] = positionalArgs('revert', positionals, ['SESSION', 'RUN']);
  const client = connect(resolveCliConfig(values, io));
  return answer(io, values, 'revert', () => client.revert(sessionId!, runId!, forceOf(values)));
}

/**
 * `a3s unrevert SESSION [--force] [--json]`: undo the session's revert (POST .../unrevert): the reverted runs' files
 * and messages back. The same output and exit codes as `a3s revert` (409 NOTHING_REVERTED: exit 1).
 */
export async function unrevertCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags('unrevert', args, REVERT_FLAGS);
  const [sessionId] = positionalArgs('unrevert', positionals, ['SESSION']);
  const client = connect(resolveCliConfig(values, io));
  return answer(io, values, 'unrevert', () => client.unrevert(sessionId!, forceOf(values)));
}

/** `text` on one line: its control characters (a newline, an escape) as JSON writes them (`\n`, `\u001b`). */
function oneLine(text: string): string {
  return text.replace(/\p{Cc}/gu, (c) =>
    c < ' ' ? JSON.stringify(c).slice(1, -1) : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A path as printed: as is, or JSON-quoted when it holds a control character, a quote or a backslash (one line). */
function shownPath(path: string): string {
  return /[\p{Cc}"\\]/u.test(path) ? `"${oneLine(path.replace(/["\\]/g, (c) => `\\${c}`))}"` : path;
}

function forceOf(values: FlagValues): { force?: boolean } {
  return booleanFlag(values, 'force') ? { force: true } : {};
}

/** Make the call and print its answer; a conflict is reported here with its paths (other errors by runCli). */
async function answer(
  io: CliIo,
  values: FlagValues,
  command: 'revert' | 'unrevert',
  call: () => Promise<RevertResponse>,
): Promise<number> {
  let done: RevertResponse;
  try {
    done = await call();
  } catch (error) {
    if (!(error instanceof RevertConflictError)) throw error;
    reportConflict(io, error, command);
    return EXIT.failed;
  }
  if (booleanFlag(values, 'json')) {
    io.out(`${JSON.stringify(done, null, 2)}\n`);
    return EXIT.ok;
  }
  io.out(done.files.map((file) => `${file.action}\t${shownPath(file.path)}\n`).join(''));
  io.err(`${summary(done, command)}\n`);
  return EXIT.ok;
}

/** `[revert] run R and 2 later runs: 3 files written or removed, 8 messages hidden from the model`. */
function summary(done: RevertResponse, command: 'revert' | 'unrevert'): string {
  const later = done.reverted_run_ids.length - 1;
  const runs = `run ${done.run_id}${later > 0 ? ` and ${later} later run${later === 1 ? '' : 's'}` : ''}`;
  const files = `${done.files.length} file${done.files.length === 1 ? '' : 's'} written or removed`;
  const messages = `${done.messages} message${done.messages === 1 ? '' : 's'}`;
  return command === 'revert'
    ? `[revert] reverted ${runs}: ${files}, ${messages} hidden from the model`
    : `[unrevert] put back ${runs}: ${files}, ${messages} visible to the model again`;
}

/** `a3s: REVERT_CONFLICT: ...`, then each path changed since (one a line) and how to write them anyway. */
function reportConflict(io: CliIo, error: RevertConflictError, command: 'revert' | 'unrevert'): void {
  const paths = Array.isArray(error.details.paths)
    ? error.details.paths.filter((path): path is string => typeof path === 'string')
    : [];
  const count = typeof error.details.count === 'number' ? error.details.count : paths.length;
  const listed = paths.slice(0, MAX_LISTED);
  io.err(
    [
      `a3s: ${error.code}: ${oneLine(error.message)}`,
      `changed since the last capture (${count} path${count === 1 ? '' : 's'}):`,
      ...listed.map((path) => `  ${shownPath(path)}`),
      ...(count > listed.length ? [`  ... and ${count - listed.length} more`] : []),
      `"a3s ${command} --force" writes ${count === 1 ? 'it' : 'them'} anyway.`,
    ].join('\n') + '\n',
  );
}

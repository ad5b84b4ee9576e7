import type { CliIo } from './cli-io.js';
import { resolveCliConfig } from './cli-config.js';
import { connect } from './connect.js';
import { didYouMean } from './did-you-mean.js';
import { EXIT } from './exit-codes.js';
import { booleanFlag, parseFlags, positionalArgs, type FlagSpec } from './parse-flags.js';
import { UsageError } from './usage-error.js';

/** The flags of `a3s sessions` (besides the global ones). */
export const SESSIONS_FLAGS = { json: { type: 'boolean' } } as const satisfies FlagSpec;

/** `a3s sessions [ls|show ID|close ID]`. */
export async function sessionsCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags('sessions', args, SESSIONS_FLAGS);
  const [sub = 'ls', ...rest] = positionals;
  if (sub !== 'ls' && sub !== 'list' && sub !== 'show' && sub !== 'close')
    throw new UsageError(
      `unknown sessions command "${sub}"${didYouMean(sub, ['ls', 'list', 'show', 'close']) || ' (ls, show ID, close ID)'}`,
      'sessions',
    );
  if (sub === 'ls' || sub === 'list') {
    positionalArgs('sessions', rest, []);
    const client = connect(resolveCliConfig(values, io));
    const sessions = await client.sessionInfos();
    if (booleanFlag(values, 'json')) {
      io.out(`${JSON.stringify(sessions, null, 2)}\n`);
      return EXIT.ok;
    }
    for (const s of sessions) {
      const state = s.closed
        ? 'closed'
        : s.currentRun
          ? `${s.currentRun.status} ${s.currentRun.id}`
          : s.busy
            ? 'busy'
            : 'idle';
      io.out(
        `${s.id}\t${state}\t${s.workspace}\t${s.model}\t${s.messageCount} message${s.messageCount === 1 ? '' : 's'}\n`,
      );
    }
    return EXIT.ok;
  }
  const [id] = positionalArgs('sessions', rest, ['ID']);
  const client = connect(resolveCliConfig(values, io));
  if (sub === 'show') {
    io.out(`${JSON.stringify(await (await client.getSession(id)).info(), null, 2)}\n`);
    return EXIT.ok;
  }
  if (await client.closeSession(id)) {
    io.out(`closed ${id}\n`);
    return EXIT.ok;
  }
  io.err(`a3s: SESSION_NOT_FOUND: session ${id} not found\n`);
  return EXIT.failed;
}

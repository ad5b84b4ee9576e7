import type { CliIo } from './cli-io.js';
import { resolveCliConfig } from './cli-config.js';
import { connect } from './connect.js';
import { followRun } from './follow-run.js';
import { booleanFlag, parseFlags, positionalArgs, type FlagSpec } from './parse-flags.js';

/** The flags of `a3s resume` (besides the global ones). */
export const RESUME_FLAGS = {
  approve: { type: 'boolean' },
  json: { type: 'boolean' },
  'wait-verification': { type: 'boolean' },
} as const satisfies FlagSpec;

/** `a3s resume SESSION RUN_ID`: resume a run from its checkpoint (a new run) and follow it like `a3s run`. */
export async function resumeCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags('resume', args, RESUME_FLAGS);
  const [sessionId, runId] = positionalArgs('resume', positionals, ['SESSION', 'RUN_ID']);
  const client = connect(resolveCliConfig(values, io));
  // Resuming the session hydrates it from the store when it is not live on this server.
  const session = await client.resumeSession(sessionId);
  const started = await session.resumeRun(runId);
  const newRunId = started.runId;
  const announce = `[run] session ${session.sessionId}, run ${newRunId} (resumed from ${runId})\n`;
  // The new run's events from the session's oldest retained one on (it may have started before the socket opened).
  const events = session.events({ runId: newRunId, follow: true, after: 0 });
  return followRun(
    session,
    newRunId,
    events,
    {
      approve: booleanFlag(values, 'approve'),
      json: booleanFlag(values, 'json'),
      requireReport: booleanFlag(values, 'wait-verification'),
      announce,
    },
    io,
  );
}

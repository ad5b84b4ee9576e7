import type { CliIo } from './cli-io.js';
import { resolveCliConfig } from './cli-config.js';
import { connect } from './connect.js';
import { EXIT } from './exit-codes.js';
import { booleanFlag, integerFlag, parseFlags, positionalArgs, type FlagSpec } from './parse-flags.js';

/** The flags of `a3s events` (besides the global ones). */
export const EVENTS_FLAGS = { after: { type: 'string' }, follow: { type: 'boolean' } } as const satisfies FlagSpec;

/** `a3s events SESSION [--after N] [--follow]`: the session's events as NDJSON, one EventEnvelopeV1 a line. */
export async function eventsCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags('events', args, EVENTS_FLAGS);
  const [sessionId] = positionalArgs('events', positionals, ['SESSION']);
  const after = integerFlag('events', values, 'after');
  const follow = booleanFlag(values, 'follow');
  const client = connect(resolveCliConfig(values, io));
  const session = await client.getSession(sessionId);
  // From the start of the retained events (or the cursor), following or not.
  const stream = session.events({ after: after ?? 0, follow });
  const stopInterrupts = io.onInterrupt(() => stream.close());
  try {
    // The wire envelope only (not the client's convenience fields): what the server sent, a line each.
    for await (const event of stream)
      io.out(
        `${JSON.stringify({ version: event.version, type: event.type, payload: event.payload, metadata: event.metadata })}\n`,
      );
  } finally {
    stopInterrupts();
  }
  return EXIT.ok;
}

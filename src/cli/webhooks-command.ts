import type { CliIo } from './cli-io.js';
import { resolveCliConfig } from './cli-config.js';
import { connect } from './connect.js';
import { EXIT } from './exit-codes.js';
import { booleanFlag, parseFlags, positionalArgs, type FlagSpec } from './parse-flags.js';

/** The flags of `a3s webhooks` (besides the global ones). */
export const WEBHOOKS_FLAGS = { json: { type: 'boolean' } } as const satisfies FlagSpec;

// A control character in a field would break the one-line-per-delivery output: such a field is JSON-quoted.
const CONTROL = /\p{Cc}/u;

function field(value: string): string {
  return CONTROL.test(value) ? JSON.stringify(value) : value;
}

/**
 * `a3s webhooks SESSION [--json]`: the session's run webhook deliveries, newest first, one a line (delivery id,
 * event, status, attempts, run id, last error); --json the server's list.
 */
export async function webhooksCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags('webhooks', args, WEBHOOKS_FLAGS);
  const [sessionId] = positionalArgs('webhooks', positionals, ['SESSION']);
  const client = connect(resolveCliConfig(values, io));
  const deliveries = await client.webhookDeliveries(sessionId);
  if (booleanFlag(values, 'json')) {
    io.out(`${JSON.stringify(deliveries, null, 2)}\n`);
    return EXIT.ok;
  }
  for (const d of deliveries) {
    const attempts = `${d.attempts} attempt${d.attempts === 1 ? '' : 's'}`;
    io.out(
      `${d.deliveryId}\t${d.event}\t${d.status}\t${attempts}\t${d.runId}\t${d.lastError === null ? '-' : field(d.lastError)}\n`,
    );
  }
  return EXIT.ok;
}

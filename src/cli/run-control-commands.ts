import { randomUUID } from 'node:crypto';
import type { CliIo } from './cli-io.js';
import { resolveCliConfig } from './cli-config.js';
import { connect } from './connect.js';
import { EXIT } from './exit-codes.js';
import { booleanFlag, parseFlags, stringFlag, type FlagSpec } from './parse-flags.js';
import { UsageError } from './usage-error.js';
import type { RunControlReceipt } from '../protocol/run-control.js';

/** The flags of `a3s steer` (besides the global ones). */
export const STEER_FLAGS = { run: { type: 'string' }, 'request-id': { type: 'string' } } as const satisfies FlagSpec;

/** The flags of `a3s interrupt` (besides the global ones). */
export const INTERRUPT_FLAGS = {
  run: { type: 'string' },
  force: { type: 'boolean' },
  reason: { type: 'string' },
} as const satisfies FlagSpec;

function receiptLine(receipt: RunControlReceipt): string {
  const where = receipt.turnId !== undefined ? ` at turn ${receipt.turnId}` : '';
  const why = receipt.reason !== undefined ? `: ${receipt.reason}` : '';
  return `${receipt.operation} ${receipt.status}${where}${why} (request ${receipt.requestId})\n`;
}

/** `a3s steer SESSION TEXT... [--run RUN_ID] [--request-id ID]`: queue input for the active run's next safe point. */
export async function steerCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags('steer', args, STEER_FLAGS);
  const [sessionId, ...words] = positionals;
  if (sessionId === undefined) throw new UsageError('missing SESSION TEXT', 'steer');
  const input = words.join(' ');
  if (input.trim() === '') throw new UsageError('missing TEXT (the input to append to the run)', 'steer');
  const runId = stringFlag(values, 'run');
  const client = connect(resolveCliConfig(values, io));
  const session = await client.getSession(sessionId);
  const receipt = await session.steer(input, {
    requestId: stringFlag(values, 'request-id') ?? randomUUID(),
    ...(runId !== undefined ? { runId } : {}),
  });
  io.out(receiptLine(receipt));
  return receipt.status === 'rejected' ? EXIT.failed : EXIT.ok;
}

/** `a3s interrupt SESSION [--force] [--reason R] [--run RUN_ID]`: stop the active run at its next safe point (or now). */
export async function interruptCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags('interrupt', args, INTERRUPT_FLAGS);
  const [sessionId, extra] = positionals;
  if (sessionId === undefined) throw new UsageError('missing SESSION', 'interrupt');
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`, 'interrupt');
  const runId = stringFlag(values, 'run');
  const reason = stringFlag(values, 'reason');
  const client = connect(resolveCliConfig(values, io));
  const session = await client.getSession(sessionId);
  const receipt = await session.interrupt({
    requestId: randomUUID(),
    ...(booleanFlag(values, 'force') ? { force: true } : {}),
    ...(reason !== undefined ? { reason } : {}),
    ...(runId !== undefined ? { runId } : {}),
  });
  io.out(receiptLine(receipt));
  return receipt.status === 'rejected' ? EXIT.failed : EXIT.ok;
}

import type { CliIo } from './cli-io.js';
import { resolveCliConfig } from './cli-config.js';
import { connect } from './connect.js';
import { EXIT } from './exit-codes.js';
import { booleanFlag, parseFlags, positionalArgs, stringFlag, type FlagSpec } from './parse-flags.js';

/** The flags of `a3s approve` (besides the global ones). */
export const APPROVE_FLAGS = { reject: { type: 'boolean' }, reason: { type: 'string' } } as const satisfies FlagSpec;

/** `a3s approve SESSION TOOL_ID [--reject] [--reason R]`: answer a pending confirmation. */
export async function approveCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags('approve', args, APPROVE_FLAGS);
  const [sessionId, toolId] = positionalArgs('approve', positionals, ['SESSION', 'TOOL_ID']);
  const approved = !booleanFlag(values, 'reject');
  const reason = stringFlag(values, 'reason');
  const client = connect(resolveCliConfig(values, io));
  const session = await client.getSession(sessionId);
  await session.confirmToolUse(toolId, approved, reason);
  io.out(`${approved ? 'approved' : 'rejected'} ${toolId} in session ${sessionId}\n`);
  return EXIT.ok;
}

import { A3sError } from '../client/index.js';
import type { CliIo } from './cli-io.js';
import { EXIT } from './exit-codes.js';
import { UsageError } from './usage-error.js';

// Server answers that mean the command line or its configuration is wrong, not the work: exit 2.
const USAGE_STATUSES = new Set([400, 401, 403, 413, 414]);

/**
 * Report a failure as one line on stderr and answer its exit code: `a3s: <message>` for usage errors (2),
 * `a3s: CODE: <message>` for errors of the server or the client (2 for a malformed, unauthenticated or
 * forbidden request, else 1). Anything else is a bug: one line too, the stack only with A3S_DEBUG=1.
 */
export function reportError(error: unknown, io: CliIo): number {
  if (error instanceof UsageError) {
    io.err(`a3s: ${error.message}\n`);
    if (error.command !== undefined) io.err(`Run "a3s ${error.command ? `${error.command} ` : ''}--help" for usage.\n`);
    return EXIT.usage;
  }
  if (error instanceof A3sError) {
    const hint =
      error.code === 'NETWORK_ERROR' ? ' (is the server running? check --url, A3S_URL or the config file)' : '';
    io.err(`a3s: ${error.code}: ${error.message}${hint}\n`);
    return USAGE_STATUSES.has(error.status) ? EXIT.usage : EXIT.failed;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.err(`a3s: internal error: ${message}\n`);
  if (io.env.A3S_DEBUG === '1' && error instanceof Error && error.stack) io.err(`${error.stack}\n`);
  return EXIT.failed;
}

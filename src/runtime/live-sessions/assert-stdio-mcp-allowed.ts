import { CodeError } from '../../errors.js';
import type { McpServerConfig } from '../../protocol/mcp.js';
import { hasScope, type Caller } from '../ports/caller.js';

/**
 * Stdio MCP servers run a command on the host: a caller without host_direct may not name one (403 FORBIDDEN naming
 * `field`), at creation, on a resume that adds servers, for a schedule's template and for inherited servers.
 */
export function assertStdioMcpAllowed(
  servers: readonly Pick<McpServerConfig, 'transport'>[] | undefined,
  caller: Caller,
  field = 'mcpServers',
): void {
  if (servers?.some((server) => server.transport.type === 'stdio') && !hasScope(caller, 'host_direct'))
    throw new CodeError(
      'FORBIDDEN',
      `${field}: stdio MCP servers run a command on the host and need the "host_direct" scope`,
      { scope: 'host_direct', field },
    );
}

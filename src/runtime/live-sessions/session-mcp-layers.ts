import type { CodeConfig } from '../../config/code-config.js';
import { assertOutboundUrl, privateOutboundAllowed } from '../outbound/assert-outbound-url.js';
import type { McpServerConfig } from '../../protocol/mcp.js';
import { hasScope, type Caller } from '../ports/caller.js';
import { assertStdioMcpAllowed } from './assert-stdio-mcp-allowed.js';
import type { HostEnv } from '../ports/host-env.js';
import { McpManager } from '../mcp/mcp-manager.js';
import type { AgentSession } from '../session-kernel/agent-session.js';
import type { SessionLogger } from '../session-kernel/session-services.js';
import { resolveTenantDirectory, workspaceLayout } from '../session-kernel/tenant-workspace.js';
import type { WorkspaceConfig } from '../session-kernel/workspace-context-cache.js';

/** What building a session's inherited MCP layer needs from the agent. */
export interface SessionMcpDeps {
  readonly hostEnv: HostEnv;
  /** Decides where a session's stdio servers may start (`cwd` inside the tenant's space). */
  readonly config: WorkspaceConfig & Pick<CodeConfig, 'outbound'>;
  /** The canonical workspace roots (default: those of config). */
  readonly workspaceRoots?: readonly string[];
  /** Where the servers' stderr lines go. */
  readonly logger: SessionLogger;
}

function inheritedManager(session: AgentSession, deps: SessionMcpDeps): McpManager {
  // Servers a host supplies for a session run in the session's sandbox, like any host-direct command.
  return new McpManager({
    source: 'inherited',
    now: () => deps.hostEnv.now(),
    defaultCwd: session.workspace,
    onLog: (server, line) => deps.logger.mcpLog(session.id, server, line),
    launcher: session.sandbox.forOrigin('host_direct'),
    outbound: { allowPrivate: session.config.outboundAllowPrivate },
  });
}

/** Connect host-supplied MCP servers as the session's inherited layer; stdio servers run host code, so they need host_direct. */
export async function attachInheritedMcp(
  session: AgentSession,
  servers: readonly McpServerConfig[],
  caller: Caller,
  deps: SessionMcpDeps,
): Promise<void> {
  assertStdioMcpAllowed(servers, caller);
  await assertMcpCwdsInTenantSpace(session, servers, caller, deps, (i) => `mcpServers[${i}].transport.cwd`);
  await assertMcpUrlsOutbound(session, servers, caller, deps.config, (i) => `mcpServers[${i}].transport.url`);
  const manager = inheritedManager(session, deps);
  try {
    for (const server of servers) await manager.add(server);
  } catch (error) {
    await manager.close();
    throw error;
  }
  session.mcp.attachInherited(manager);
}

/**
 * Refuse HTTP and SSE servers whose URL the caller may not make the server call: private, loopback and
 * link-local addresses only when both the caller and the session's creator may (host_direct, or config
 * outbound.allow_private_networks); the session's right decides every connection later, which checks and
 * pins the address again. 400 naming the field.
 */
export async function assertMcpUrlsOutbound(
  session: AgentSession,
  servers: readonly McpServerConfig[],
  caller: Caller,
  config: Pick<CodeConfig, 'outbound'>,
  field: (index: number) => string,
): Promise<void> {
  const allowPrivate = session.config.outboundAllowPrivate && privateOutboundAllowed(caller, config);
  for (const [i, server] of servers.entries()) {
    if (server.transport.type === 'stdio') continue;
    await assertOutboundUrl(server.transport.url, field(i), allowPrivate);
  }
}

/**
 * Refuse stdio servers a session adds whose `cwd` (relative: against the session's workspace) leaves the owner
 * tenant's space, when tenants are split and the caller is no admin: the same WORKSPACE_NOT_FOUND answer as a
 * workspace, naming the field. Without a `cwd` a server starts in the session's workspace, checked already.
 */
export async function assertMcpCwdsInTenantSpace(
  session: AgentSession,
  servers: readonly McpServerConfig[],
  caller: Caller,
  deps: Pick<SessionMcpDeps, 'config' | 'workspaceRoots'>,
  field: (index: number) => string,
): Promise<void> {
  const layout = await workspaceLayout(deps.config, deps.workspaceRoots);
  if (!layout.perTenant || hasScope(caller, 'admin')) return;
  const claim = { tenantId: session.config.ownerTenantId, admin: false };
  for (const [i, server] of servers.entries()) {
    if (server.transport.type !== 'stdio' || server.transport.cwd === undefined) continue;
    await resolveTenantDirectory(layout, server.transport.cwd, claim, { field: field(i), base: session.workspace });
  }
}

/**
 * Give a restored session back the MCP layers it had: the host-supplied servers from its stored options
 * (inherited layer) and its own servers from the snapshot (added with POST .../mcp, not removed since).
 *
 * There is deliberately no scope check here. stdio servers run a command on the host, so they were checked
 * for host_direct when the session was created (mcpServers) or when the server was added (the MCP route),
 * against the caller who chose the command. The snapshot comes from the server's own store, which only the
 * server writes, so that authorisation stands for the session's lifetime. The caller who happens to restore
 * it (any caller of the tenant, an admin, a plain GET that hydrates it on another node) chooses no command,
 * and without host_direct it must neither be refused the session nor silently strip it of its servers.
 *
 * Servers connect concurrently; one that cannot start does not fail the restore: it stays registered with
 * its error (GET .../mcp shows it), as a global server does at start.
 */
export async function reattachMcp(
  session: AgentSession,
  inherited: readonly McpServerConfig[],
  own: readonly McpServerConfig[],
  deps: SessionMcpDeps,
): Promise<void> {
  const reattachInherited = async (): Promise<void> => {
    if (inherited.length === 0) return;
    const manager = inheritedManager(session, deps);
    await manager.registerAll(inherited);
    session.mcp.attachInherited(manager);
  };
  await Promise.all([reattachInherited(), own.length > 0 ? session.mcp.restore(own) : undefined]);
}

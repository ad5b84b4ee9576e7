import { openConfiguredDirectory, withHeldDirectory } from '../workspace/held-directory.js';
import type { WorkspaceAccess } from '../workspace/workspace-directory.js';
import type { WorkerAgentSpec } from '../../protocol/worker-agents.js';
import type { AgentDefinition } from './agent-definition.js';
import { AgentRegistry } from './agent-registry.js';
import { loadAgentDir } from './load-agent-dir.js';
import { resolveWorkspaceAgentDir } from './resolve-workspace-agent-dir.js';
import { compileWorkerAgents } from './worker-agent.js';

/** What a session's agents are resolved from. */
export interface SessionAgentsRequest {
  /** The operator's `agent_dirs` (trusted; relative to the server's working directory; a missing one is a warning). */
  readonly configDirs: readonly string[];
  /** The session's `agentDirs` (each must resolve inside the workspace). */
  readonly sessionDirs: readonly string[];
  /** The session's pinned workspace (session directories are opened from it). */
  readonly workspace: WorkspaceAccess;
  /** The session's workerAgents (registered after the directories: a worker replaces a file's agent of its name). */
  readonly workers: readonly WorkerAgentSpec[];
  /** The creator may give a worker confirmationInheritance "auto_approve" (see mayAutoApprove). */
  readonly workersMayAutoApprove: boolean;
  /** The agent the session runs as (SessionOptions.agent), if any: a built-in, a file's agent or a worker. */
  readonly agent: string | undefined;
}

/** A session's agent registry, the agent it runs as, and notes for initWarning. */
export interface SessionAgents {
  readonly registry: AgentRegistry;
  readonly agent: AgentDefinition | undefined;
  readonly warnings: string[];
}

/**
 * Build a session's registry: the built-ins, every definition of the operator's agent_dirs (a bad file is
 * SESSION_INITIALIZATION_ERROR naming it), then of the session's agentDirs (SESSION_CONFIGURATION_ERROR
 * naming `agentDirs[i]` or the file and field), then its workerAgents (compileWorkerAgents); then look up the
 * session's agent (AGENT_NOT_FOUND).
 */
export async function resolveSessionAgents(request: SessionAgentsRequest): Promise<SessionAgents> {
  const registry = new AgentRegistry();
  const warnings: string[] = [];
  for (const dir of request.configDirs) {
    const held = await openConfiguredDirectory(dir);
    if (held === undefined) {
      warnings.push(`agent_dirs: "${dir}" does not exist`);
      continue;
    }
    registry.add(
      await withHeldDirectory(held, (root) =>
        loadAgentDir({ root, label: dir, source: 'config', errorCode: 'SESSION_INITIALIZATION_ERROR' }),
      ),
    );
  }
  for (const [index, dir] of request.sessionDirs.entries()) {
    const held = resolveWorkspaceAgentDir(request.workspace, dir, `agentDirs[${index}]`, 'SESSION_CONFIGURATION_ERROR');
    registry.add(
      await withHeldDirectory(held, (root) =>
        loadAgentDir({ root, label: dir, source: 'session', errorCode: 'SESSION_CONFIGURATION_ERROR' }),
      ),
    );
  }
  registry.add(
    compileWorkerAgents(request.workers, {
      mayAutoApprove: request.workersMayAutoApprove,
      field: 'body.workerAgents',
      errorCode: 'SESSION_CONFIGURATION_ERROR',
    }),
  );
  return { registry, agent: request.agent === undefined ? undefined : registry.require(request.agent), warnings };
}

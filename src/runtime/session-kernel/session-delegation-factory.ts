import type { SubagentTaskSnapshot } from '../../protocol/subagent-task.js';
import { SessionDelegation } from '../delegation/session-delegation.js';
import { SubagentTasks } from '../delegation/subagent-tasks.js';
import { TaskSlots } from '../delegation/task-slots.js';
import type { ProviderCallLane } from '../ports/provider-call-lane.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import type { SessionArtifacts } from './session-artifacts.js';
import type { SessionEmit } from './session-emitter.js';
import type { SessionGovernanceAccess } from './session-governance-access.js';
import type { SessionMcp } from './session-mcp.js';
import type { SessionScope } from './session-services.js';
import type { SingleFlight } from './single-flight.js';

/** The parts of the session its delegation uses (read when a task first runs). */
export interface SessionDelegationWiring {
  readonly config: ResolvedSessionConfig;
  readonly scope: SessionScope;
  readonly emit: SessionEmit;
  /** The session's active run, if any. */
  readonly flight: SingleFlight;
  /** The session's governance: its children share it. */
  readonly governance: SessionGovernanceAccess;
  /** The session's MCP layers: its children see them without owning them. */
  readonly mcp: SessionMcp;
  /** Large outputs are kept as artifacts of the session. */
  readonly artifacts: SessionArtifacts;
  /** The generate lane the session's provider requests wait in (queueConfig): its children's wait in it too. */
  readonly providerLane: ProviderCallLane | undefined;
}

/** A session's subagent tasks and the delegation that runs them. */
export interface SessionDelegationParts {
  readonly tasks: SubagentTasks;
  readonly delegation: SessionDelegation;
}

/** Build a session's subagent tasks and delegation (task, parallel_task, Skill, POST .../tasks) with the agent's bounds; the delegation is wired on first use. */
export function buildSessionDelegation(
  wiring: SessionDelegationWiring,
  restoredTasks: readonly SubagentTaskSnapshot[] | undefined,
): SessionDelegationParts {
  const { config, scope } = wiring;
  const { hostEnv, agent } = scope;
  const bounds = agent.delegation;
  const tasks = new SubagentTasks(
    config.retention.maxTerminalSubagentTasks,
    bounds.keepFinishedChildren,
    () => hostEnv.now(),
    restoredTasks,
  );
  // Wired on first delegation: a session that never delegates keeps none of it.
  const delegation = new SessionDelegation(() => {
    const { emit, flight, governance, mcp, artifacts, providerLane } = wiring;
    return {
      sessionId: config.sessionId,
      depth: config.delegationDepth,
      limits: bounds.limits,
      inheritance: bounds.inheritance,
      hostEnv,
      emit,
      activeRunId: () => flight.runId,
      agents: config.agents,
      skills: config.skills,
      tasks,
      // Per session, across every parallel_task and host `tasks` request: the option, else config max_parallel_tasks.
      slots: new TaskSlots(config.options.maxParallelTasks ?? bounds.limits.maxParallel),
      parent: {
        config,
        hostEnv,
        governanceParts: () => governance.parts(),
        mcpLayers: () => mcp.layers(),
        providerLane,
      },
      spawner: agent.children,
      storeArtifact: (content, toolCallId, toolName) => artifacts.store(content, toolCallId, toolName),
    };
  });
  return { tasks, delegation };
}

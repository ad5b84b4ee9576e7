import type { SubagentTaskSnapshot } from '../../protocol/subagent-task.js';
import type { ChildParent } from '../delegation/child-session.js';
import { SessionDelegation } from '../delegation/session-delegation.js';
import { SubagentTasks } from '../delegation/subagent-tasks.js';
import type { AgentSessionDeps } from './agent-session-deps.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import type { SessionEmit } from './session-emitter.js';

/** Defaults when the agent passes no delegation settings (embedders). */
export const DEFAULT_DELEGATION = { limits: { maxDepth: 3, maxParallel: 8 }, inheritance: 'inherit_parent', keepFinishedChildren: 8 } as const;

/** What a session's delegation is wired from, on first use. */
export interface SessionDelegationWiring {
  readonly emit: SessionEmit;
  /** The session's active run, if any. */
  activeRunId(): string | undefined;
  /** The session as its children's parent. */
  readonly parent: ChildParent;
  /** Keep a large output as an artifact of the session; its id, or undefined when not stored. */
  storeArtifact(content: string, toolCallId: string, toolName: string): string | undefined;
}

/** A session's subagent tasks and the delegation that runs them. */
export interface SessionDelegationParts {
  readonly tasks: SubagentTasks;
  readonly delegation: SessionDelegation;
}

/** Build a session's subagent tasks and delegation (task, parallel_task, Skill, POST .../tasks) with the agent's bounds or the defaults. */
export function buildSessionDelegation(config: ResolvedSessionConfig, deps: AgentSessionDeps, restoredTasks: readonly SubagentTaskSnapshot[] | undefined, wire: () => SessionDelegationWiring): SessionDelegationParts {
  const { hostEnv } = deps;
  const tasks = new SubagentTasks(config.retention.maxTerminalSubagentTasks, deps.delegation?.keepFinishedChildren ?? DEFAULT_DELEGATION.keepFinishedChildren, () => hostEnv.now(), restoredTasks);
  const delegation = new SessionDelegation(() => {
    const wiring = wire();
    return {
    sessionId: config.sessionId,
    depth: config.delegationDepth,
    limits: deps.delegation?.limits ?? DEFAULT_DELEGATION.limits,
    inheritance: deps.delegation?.inheritance ?? DEFAULT_DELEGATION.inheritance,
    hostEnv,
    emit: wiring.emit,
    activeRunId: () => wiring.activeRunId(),
    agents: config.agents,
    skills: config.skills,
    tasks,
    parent: wiring.parent,
    spawner: deps.children,
    storeArtifact: (content, toolCallId, toolName) => wiring.storeArtifact(content, toolCallId, toolName),
    };
  });
  return { tasks, delegation };
}

import type { WorkerAgentKind } from '../../protocol/agents.js';
import type { PermissionPolicy } from '../../protocol/governance.js';
import type { ConfirmationInheritance } from '../../protocol/subagent-task.js';

/** Where an agent definition came from: built in, the operator's `agent_dirs`, or the session's own directories. */
export type AgentSource = 'builtin' | 'config' | 'session';

/** One named agent a session can run as (and the later `task` tool can delegate to). */
export interface AgentDefinition {
  readonly name: string;
  readonly description: string;
  /** The prompt style (agent_mode_changed.mode): general, planning, explore, verification, code_review. */
  readonly mode: string;
  /** Text for the system prompt's role slot (a file's `prompt` or Markdown body, else its description). */
  readonly prompt: string;
  /** The agent's own bound on tool calls (intersected with the session's policy: the stricter verdict wins); none: no extra bound. */
  readonly permissions?: PermissionPolicy;
  /** `provider/model` the agent runs on (the session's explicit `model` wins). */
  readonly model?: string;
  /** Tool rounds per run (the session's explicit `maxToolRounds` wins). */
  readonly maxSteps?: number;
  readonly source: AgentSource;
  /** True when the permissions deny every tool that writes, runs commands or reaches the network. */
  readonly readOnly: boolean;
  /** A worker's kind (workerAgents, registerWorkerAgent): the preset its bound, prompt and steps came from. */
  readonly kind?: WorkerAgentKind;
  /** A worker's `hidden`: kept out of the agents offered to editors, still delegated to by name. */
  readonly hidden?: boolean;
  /** Bounds besides `permissions` (a worker's own permissions under its kind's bound); the strictest verdict wins. */
  readonly extraBounds?: readonly PermissionPolicy[];
  /** A worker's confirmationInheritance for the children delegated to it (a host call's own choice wins). */
  readonly confirmationInheritance?: ConfirmationInheritance;
}

/** Every policy an agent bounds its calls with: its permissions, then its extra bounds. */
export function agentBounds(agent: AgentDefinition): PermissionPolicy[] {
  return [...(agent.permissions ? [agent.permissions] : []), ...(agent.extraBounds ?? [])];
}

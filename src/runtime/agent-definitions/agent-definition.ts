import type { PermissionPolicy } from '../../protocol/governance.js';

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
}

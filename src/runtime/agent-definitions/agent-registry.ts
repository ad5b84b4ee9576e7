import { CodeError } from '../../errors.js';
import type { AgentInfo } from '../../protocol/agents.js';
import type { AgentDefinition } from './agent-definition.js';
import { BUILTIN_AGENTS } from './builtin-agents.js';

/** Agents one session knows at most (built-ins included). */
export const MAX_SESSION_AGENTS = 1024;

/**
 * One session's agents by name: the built-ins, then the operator's agent_dirs, the session's agentDirs and
 * directories registered later. Built-ins cannot be redefined; a later definition of a custom name replaces
 * the earlier one. The `task` tool looks its agents up here.
 */
/** The built-ins by name, shared by every session (most sessions never add an agent). */
const BUILTIN_BY_NAME: ReadonlyMap<string, AgentDefinition> = new Map(
  BUILTIN_AGENTS.map((agent) => [agent.name, agent]),
);

export class AgentRegistry {
  /** Built-ins plus added definitions, created on the first add (copy on write of the shared built-ins). */
  private agents: ReadonlyMap<string, AgentDefinition> = BUILTIN_BY_NAME;

  /** The agent of that name, if any. */
  get(name: string): AgentDefinition | undefined {
    return this.agents.get(name);
  }

  /** The agent of that name, or AGENT_NOT_FOUND naming it and the known names. */
  require(name: string, field = 'agent'): AgentDefinition {
    const agent = this.agents.get(name);
    if (!agent)
      throw new CodeError(
        'AGENT_NOT_FOUND',
        `${field}: no agent named "${name}" (known: ${[...this.agents.keys()].join(', ')})`,
        { field, agent: name },
      );
    return agent;
  }

  /** Add definitions (already validated; built-in names never reach here). */
  add(definitions: readonly AgentDefinition[]): void {
    if (definitions.length === 0) return;
    const fresh = definitions.filter((agent) => !this.agents.has(agent.name)).length;
    if (this.agents.size + fresh > MAX_SESSION_AGENTS)
      throw new CodeError('VALIDATION_ERROR', `a session knows at most ${MAX_SESSION_AGENTS} agents`, {
        limit: MAX_SESSION_AGENTS,
      });
    const agents = new Map(this.agents);
    for (const agent of definitions) agents.set(agent.name, agent);
    this.agents = agents;
  }

  /** Every agent, built-ins first, in registration order. */
  list(): AgentDefinition[] {
    return [...this.agents.values()];
  }
}

/** An agent in wire form. */
export function agentInfo(agent: AgentDefinition): AgentInfo {
  return {
    name: agent.name,
    description: agent.description,
    source: agent.source,
    mode: agent.mode,
    readOnly: agent.readOnly,
    model: agent.model ?? null,
    maxSteps: agent.maxSteps ?? null,
    kind: agent.kind ?? null,
    hidden: agent.hidden === true,
  };
}

import type { PermissionPolicy } from '../../protocol/governance.js';
import { agentBounds } from '../agent-definitions/agent-definition.js';
import type { ResolvedModel } from '../invocation/llm-invoker.js';
import { buildSystemPrompt } from '../prompt/system-prompt.js';
import type { ResolvedSessionConfig } from '../session-kernel/resolved-session-config.js';
import { SkillRegistry } from '../skills/skill-registry.js';
import type { ChildSpec } from './child-session.js';

/** The permission bound of a `Skill` child: its allowed-tools are the only grants; everything else is denied. */
export function skillPolicy(allowedTools: readonly string[]): PermissionPolicy {
  return { enabled: true, allow: [...allowedTools], ask: [], deny: [], defaultDecision: 'deny' };
}

/** The role slot of a `Skill` child (the seed's wording). */
function skillRole(spec: ChildSpec): string | undefined {
  const skill = spec.skill;
  if (!skill) return spec.agent.prompt;
  return [`You are executing the '${skill.name}' skill.`, skill.description, skill.content]
    .filter((part) => part.trim())
    .join('\n\n');
}

/**
 * A child session's configuration, derived from its parent's: the same tenant, labels, workspace, policy,
 * floor, sandbox and retention; the parent's agent bounds plus the delegated agent's permissions (or the
 * skill's allowed-tools); the agent's prompt and model; kept in this process only and never saved on its own.
 */
export function childSessionConfig(
  parent: ResolvedSessionConfig,
  spec: ChildSpec,
  sessionId: string,
  model: ResolvedModel,
): ResolvedSessionConfig {
  const { agent, skill } = spec;
  const bounds: PermissionPolicy[] = [...parent.permissionBounds];
  bounds.push(...agentBounds(agent));
  if (skill) bounds.push(skillPolicy(skill.allowedTools));
  const { options } = parent;
  // A skill child runs that skill only: it searches and runs no others.
  const skills = skill ? new SkillRegistry() : parent.skills;
  return {
    ...parent,
    sessionId,
    model,
    governance: {
      ...parent.governance,
      maxToolRounds: spec.maxSteps ?? agent.maxSteps ?? parent.governance.maxToolRounds,
    },
    // A child runs its one delegated task: it neither plans nor tracks a goal (the parent does).
    planningMode: 'disabled',
    goalTracking: false,
    permissionBounds: bounds,
    systemPrompt: buildSystemPrompt({
      role: skillRole(spec),
      skillsCatalog: skills.discoverable().length > 0,
      guidelines: options.guidelines,
      responseStyle: options.responseStyle,
      extra: options.extra,
      agentsMd: parent.agentsMd,
    }),
    autoSave: false,
    sessionStore: 'memory',
    memory: null,
    agent: agent.name,
    agentDefinition: agent,
    skills,
    initWarning: null,
    // The parent announced its skipped instruction files; the child (whose events the parent sees) does not again.
    workspaceSkipped: undefined,
    parentSessionId: parent.sessionId,
    delegationDepth: parent.delegationDepth + 1,
    // What session info shows; the child is rebuilt from nothing (it is never saved on its own).
    options: {
      workspace: options.workspace,
      agent: agent.name,
      model: model.id,
      autoSave: false,
      sessionStore: { type: 'memory' },
    },
  };
}

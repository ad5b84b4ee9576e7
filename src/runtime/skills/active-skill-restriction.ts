import { parseRule, ruleCoversTool, type PermissionRule } from '../policy/permission-policy.js';
import type { SkillDefinition } from './skill-definition.js';
import type { SkillRegistry } from './skill-registry.js';

/** A skill whose `allowed-tools` restrict the session (enforceActiveSkillToolRestrictions), with its parsed rules. */
interface ActiveSkill {
  readonly name: string;
  readonly rules: readonly PermissionRule[];
}

/**
 * The active skills, as the seed defines them (SEED-REFERENCE §3.4): the session's instruction skills that
 * declare `allowed-tools`, whatever their source (builtin, skillDirs, inlineSkills, addSkill), as they are at
 * the call (addSkill and removeSkill change them at once).
 */
export function activeSkills(skills: readonly SkillDefinition[]): ActiveSkill[] {
  const active: ActiveSkill[] = [];
  for (const skill of skills) {
    if (skill.kind !== 'instruction' || skill.allowedTools.length === 0) continue;
    const rules: PermissionRule[] = [];
    for (const source of skill.allowedTools) {
      try {
        rules.push(parseRule(source));
      } catch {
        // A rule that does not parse grants nothing.
      }
    }
    active.push({ name: skill.name, rules });
  }
  return active;
}

/**
 * The session-level active-skill restriction (`enforceActiveSkillToolRestrictions: true`): while any skill is
 * active, a call runs only when some active skill's `allowed-tools` names its tool (the tool part of a rule, as
 * the seed checks it with the `*` pattern: argument patterns bound only `Skill` runs); otherwise it is refused
 * naming the active skills. No active skill: no restriction. Host-direct calls are the host's, not restricted.
 * The active set is recomputed only when the registry changes.
 */
export function activeSkillRestriction(
  registry: SkillRegistry,
): (toolName: string, origin?: string) => string | undefined {
  let version = -1;
  let active: ActiveSkill[] = [];
  return (toolName, origin) => {
    if (origin === 'host_direct' || registry.size === 0) return undefined;
    if (registry.version() !== version) {
      version = registry.version();
      active = activeSkills(registry.list());
    }
    if (active.length === 0) return undefined;
    if (active.some((skill) => skill.rules.some((rule) => ruleCoversTool(rule, toolName)))) return undefined;
    const names = active.map((skill) => `'${skill.name}'`).join(', ');
    return `Tool '${toolName}' is not allowed by any active skill (active: ${names}; enforceActiveSkillToolRestrictions is on, so only the tools their allowed-tools name may run).`;
  };
}

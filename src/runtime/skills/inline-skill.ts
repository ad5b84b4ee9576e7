import type { InlineSkill } from '../../protocol/skills.js';
import { parseAllowedTools } from './parse-allowed-tools.js';
import type { SkillDefinition } from './skill-definition.js';

/** A skill given inline (inlineSkills, POST .../skills). */
export function inlineSkill(skill: InlineSkill): SkillDefinition {
  return {
    name: skill.name,
    description: skill.description ?? '',
    kind: skill.kind ?? 'instruction',
    tags: skill.tags ?? [],
    allowedTools: parseAllowedTools(skill.allowedTools),
    version: undefined,
    disableModelInvocation: skill.disableModelInvocation ?? false,
    content: skill.content.trim(),
    source: 'inline',
  };
}

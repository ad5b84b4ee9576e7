import type { SkillDefinition } from './skill-definition.js';

/** The built-in skill catalog (`builtinSkills: true`): empty, as in the seed, which ships no built-in skills. */
export function builtinSkills(): SkillDefinition[] {
  return [];
}

import type { SkillDefinition } from './skill-definition.js';

/** search_skills' default result count. */
export const DEFAULT_SKILL_SEARCH_LIMIT = 5;
/** search_skills' largest result count. */
export const MAX_SKILL_SEARCH_LIMIT = 20;

/** A skill and its search score. */
export interface ScoredSkill {
  readonly skill: SkillDefinition;
  readonly score: number;
}

function tokensOf(query: string): string[] {
  return query
    .split(/\s+/)
    .map((token) => token.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))
    .filter((token) => token.length >= 2);
}

/** The seed's score of one skill for a lowercased query (0: no match; an empty query scores 1). */
export function scoreSkill(skill: SkillDefinition, query: string): number {
  if (!query.trim()) return 1;
  const name = skill.name.toLowerCase();
  const tags = skill.tags.map((tag) => tag.toLowerCase());
  const description = skill.description.toLowerCase();
  const content = skill.content.toLowerCase();
  let score = 0;
  if (query.includes(name)) score += 100;
  if (tags.some((tag) => query.includes(tag))) score += 80;
  for (const token of tokensOf(query)) {
    if (name.includes(token)) score += 20;
    if (tags.some((tag) => tag.includes(token))) score += 15;
    if (description.includes(token)) score += 8;
    if (content.includes(token)) score += 2;
  }
  return score;
}

/** Rank skills as the seed does: drop score 0, score descending then name ascending, `limit` clamped to 1..20. */
export function scoreSkills(
  skills: readonly SkillDefinition[],
  query: string,
  limit: number = DEFAULT_SKILL_SEARCH_LIMIT,
): ScoredSkill[] {
  const lowered = query.toLowerCase();
  const take = Math.min(MAX_SKILL_SEARCH_LIMIT, Math.max(1, Math.trunc(limit)));
  return skills
    .map((skill) => ({ skill, score: scoreSkill(skill, lowered) }))
    .filter((entry) => entry.score > 0)
    .sort((a, b) => b.score - a.score || (a.skill.name < b.skill.name ? -1 : a.skill.name > b.skill.name ? 1 : 0))
    .slice(0, take);
}

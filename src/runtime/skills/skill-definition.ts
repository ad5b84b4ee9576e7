import type { SkillInfo, SkillKind } from '../../protocol/skills.js';

/** Where a skill came from. */
export type SkillSource = SkillInfo['source'];

/** One skill of a session: its metadata and its Markdown body. */
export interface SkillDefinition {
  readonly name: string;
  readonly description: string;
  readonly kind: SkillKind;
  readonly tags: readonly string[];
  /** The grants a `Skill` run gets (empty: every tool denied). */
  readonly allowedTools: readonly string[];
  readonly version: string | undefined;
  /** Hidden from search and the catalog; `Skill` refuses it. */
  readonly disableModelInvocation: boolean;
  /** The body (instructions, or the persona's role text). */
  readonly content: string;
  readonly source: SkillSource;
}

/** True for skills search_skills may return: instruction and tool kinds that allow model invocation. */
export function isDiscoverable(skill: SkillDefinition): boolean {
  return skill.kind !== 'persona' && !skill.disableModelInvocation;
}

/** A skill in wire form. */
export function skillInfo(skill: SkillDefinition): SkillInfo {
  return {
    name: skill.name,
    description: skill.description,
    kind: skill.kind,
    tags: [...skill.tags],
    allowed_tools: [...skill.allowedTools],
    version: skill.version ?? null,
    disable_model_invocation: skill.disableModelInvocation,
    source: skill.source,
  };
}

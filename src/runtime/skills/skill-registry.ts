import { CodeError } from '../../errors.js';
import { isDiscoverable, type SkillDefinition } from './skill-definition.js';

/** A session's skills by name (a later definition of a name replaces the earlier one), with a change counter. */
export class SkillRegistry {
  // Created on the first add: most sessions have no skills.
  private byName: Map<string, SkillDefinition> | undefined;
  private changes = 0;

  /** Add or replace skills. */
  add(skills: readonly SkillDefinition[]): void {
    if (skills.length === 0) return;
    this.byName ??= new Map();
    for (const skill of skills) this.byName.set(skill.name, skill);
    this.changes += 1;
  }

  /** Remove one skill; an unknown name is SKILL_NOT_FOUND. */
  remove(name: string): void {
    if (!this.byName?.delete(name))
      throw new CodeError('SKILL_NOT_FOUND', `no skill named "${name}" in this session`, { resource: `skill:${name}` });
    this.changes += 1;
  }

  /** The skill of this name, if any. */
  get(name: string): SkillDefinition | undefined {
    return this.byName?.get(name);
  }

  /** Every skill, by name. */
  list(): SkillDefinition[] {
    return [...(this.byName?.values() ?? [])].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The skills search_skills may return. */
  discoverable(): SkillDefinition[] {
    return this.list().filter(isDiscoverable);
  }

  /** Bumped on every add or remove (the session's tool set follows it). */
  version(): number {
    return this.changes;
  }

  /** How many skills the session has. */
  get size(): number {
    return this.byName?.size ?? 0;
  }
}

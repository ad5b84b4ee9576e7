import { describe, expect, it } from 'vitest';
import { parseAllowedTools } from '../../src/runtime/skills/parse-allowed-tools.js';
import { scoreSkill, scoreSkills } from '../../src/runtime/skills/score-skills.js';
import type { SkillDefinition } from '../../src/runtime/skills/skill-definition.js';

function skill(name: string, fields: Partial<SkillDefinition> = {}): SkillDefinition {
  return {
    name,
    description: '',
    kind: 'instruction',
    tags: [],
    allowedTools: [],
    version: undefined,
    disableModelInvocation: false,
    content: '',
    source: 'inline',
    ...fields,
  };
}

describe('search_skills scoring (seed §9)', () => {
  const release = skill('release-review', {
    description: 'Review a release branch',
    tags: ['git', 'release'],
    content: 'Check the changelog and tags.',
  });

  it.each([
    // full name +100, the query contains the tag "release" +80; token "release-review": name +20 (no tag, description or body contains it)
    ['release-review', 200],
    // tag "release" contained in the query +80; token "release": name +20, tag +15, description +8, content 0
    ['release', 123],
    // "git" tag +80; token "git": tag +15
    ['git', 95],
    // description only: "branch" +8
    ['branch', 8],
    // content only: "changelog" +2
    ['changelog', 2],
    // tokens shorter than 2 after trimming are ignored; "(branch)," trims to "branch"
    ['x (branch), !', 8],
    // upper case query is lowercased
    ['CHANGELOG', 2],
    ['unrelated', 0],
  ])('%s scores %i', (query, expected) => {
    expect(scoreSkill(release, query.toLowerCase())).toBe(expected);
  });

  it('an empty query scores 1 for every skill; ties sort by name', () => {
    const found = scoreSkills([skill('b'), skill('a'), skill('c')], '   ');
    expect(found.map((entry) => [entry.skill.name, entry.score])).toEqual([
      ['a', 1],
      ['b', 1],
      ['c', 1],
    ]);
  });

  it('drops score 0, sorts by score then name, clamps the limit to 1..20', () => {
    const skills = [
      skill('zeta', { description: 'deploy' }),
      skill('alpha', { description: 'deploy' }),
      skill('deploy'),
      skill('other'),
    ];
    expect(scoreSkills(skills, 'deploy').map((entry) => entry.skill.name)).toEqual(['deploy', 'alpha', 'zeta']);
    expect(scoreSkills(skills, 'deploy', 0).map((entry) => entry.skill.name)).toEqual(['deploy']);
    const many = Array.from({ length: 30 }, (_, index) => skill(`s${String(index).padStart(2, '0')}`));
    expect(scoreSkills(many, '', 99)).toHaveLength(20);
    expect(scoreSkills(many, '')).toHaveLength(5);
  });
});

describe('allowed-tools', () => {
  it.each([
    ['read(*), grep(*)', ['read(*)', 'grep(*)']],
    ['read grep', ['read', 'grep']],
    ['bash(git status), read', ['bash(git status)', 'read']],
    ['bash(git status) read', ['bash(git status)', 'read']],
    [
      ['read', ' ls '],
      ['read', 'ls'],
    ],
    [undefined, []],
  ] as const)('%j -> %j', (input, expected) => {
    expect(parseAllowedTools(input)).toEqual(expected);
  });
});

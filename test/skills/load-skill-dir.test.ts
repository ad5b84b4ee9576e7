import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CodeError } from '../../src/errors.js';
import { loadSkillDir, MAX_SKILL_FILE_BYTES } from '../../src/runtime/skills/load-skill-dir.js';
import { openHeldDirectory, withHeldDirectory } from '../../src/runtime/workspace/held-directory.js';
import { tempDir, writeFiles } from '../support/test-server.js';

const load = (dir: string) =>
  withHeldDirectory(openHeldDirectory(realpathSync(dir)), (root) =>
    loadSkillDir({ root, label: 'skills', source: 'session', errorCode: 'VALIDATION_ERROR' }),
  );

async function failure(promise: Promise<unknown>): Promise<CodeError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(CodeError);
  return error as CodeError;
}

describe('loadSkillDir', () => {
  it('reads *.md recursively and <folder>/SKILL.md, names defaulting to the stem or the folder, in path order', async () => {
    const dir = tempDir('skills-');
    writeFiles(dir, {
      'a.md': '---\ndescription: A skill\nallowed-tools: read(*), grep(*)\ntags: [x, y]\nversion: 1.2\n---\nBody A\n',
      'nested/deeper/b.md':
        '---\nname: bee\nkind: tool\nallowed-tools: [bash, read]\ndisable-model-invocation: true\n---\nBody B',
      'pack/SKILL.md': '---\nkind: persona\n---\nYou are a pirate.',
      'pack/notes.md': 'resources of the pack are not skills',
      'plain.md': 'No front matter at all.',
    });
    const skills = await load(dir);
    expect(skills.map((skill) => skill.name)).toEqual(['a', 'bee', 'pack', 'plain']);
    expect(skills[0]).toMatchObject({
      description: 'A skill',
      allowedTools: ['read(*)', 'grep(*)'],
      tags: ['x', 'y'],
      version: '1.2',
      kind: 'instruction',
      content: 'Body A',
    });
    expect(skills[1]).toMatchObject({ kind: 'tool', allowedTools: ['bash', 'read'], disableModelInvocation: true });
    expect(skills[2]).toMatchObject({ kind: 'persona', content: 'You are a pirate.' });
    expect(skills[3]).toMatchObject({ content: 'No front matter at all.', kind: 'instruction' });
  });

  it('names the file and the field of bad front matter', async () => {
    const dir = tempDir('skills-');
    writeFiles(dir, { 'sub/bad.md': '---\nkind: wizard\n---\nx' });
    const error = await failure(load(dir));
    expect(error.message).toContain('skills/sub/bad.md: kind:');
    expect(error.details).toMatchObject({ file: 'skills/sub/bad.md', field: 'kind' });

    const yamlDir = tempDir('skills-');
    writeFiles(yamlDir, { 'y.md': '---\ntags: [unclosed\n---\nx' });
    expect((await failure(load(yamlDir))).message).toContain('skills/y.md: invalid YAML front matter');

    const openDir = tempDir('skills-');
    writeFiles(openDir, { 'o.md': '---\nname: o\nbody without a closing line' });
    expect((await failure(load(openDir))).message).toContain('skills/o.md: the front matter opened by "---"');
  });

  it('refuses symlinks leaving the directory, duplicate names and files over the bound', async () => {
    const outside = tempDir('outside-');
    writeFileSync(join(outside, 'secret.md'), '---\nname: secret\n---\nx');
    const dir = tempDir('skills-');
    symlinkSync(join(outside, 'secret.md'), join(dir, 'link.md'));
    expect((await failure(load(dir))).message).toContain(
      'skills/link.md: a symlink leaving the skill directory is refused',
    );

    const inside = tempDir('skills-');
    mkdirSync(join(inside, 'real'));
    writeFileSync(join(inside, 'real', 'ok.md'), '---\nname: ok\n---\nx');
    symlinkSync(join(inside, 'real'), join(inside, 'alias'));
    expect((await failure(load(inside))).message).toContain('name: "ok" is already defined by skills/alias/ok.md');

    const big = tempDir('skills-');
    writeFileSync(join(big, 'big.md'), 'x'.repeat(MAX_SKILL_FILE_BYTES + 1));
    expect((await failure(load(big))).message).toContain(`skills/big.md: larger than ${MAX_SKILL_FILE_BYTES} bytes`);
  });
});

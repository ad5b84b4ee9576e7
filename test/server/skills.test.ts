import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { tempDir, writeFiles, type TestServer } from '../support/test-server.js';
import { createSession, ofType, runAndWait, runEvents, toolMessage, useTestServers } from '../support/run-helpers.js';

type Msg = { role: string; content?: unknown; tool_call_id?: string };

const systemPromptOf = (t: TestServer, index = -1) =>
  String((t.fake.requests.at(index)?.body.messages as Msg[])[0].content);
const offeredTools = (t: TestServer, index = -1) =>
  ((t.fake.requests.at(index)?.body.tools ?? []) as { function: { name: string } }[]).map((x) => x.function.name);

const FILES = {
  'skills/release.md':
    '---\nname: release-review\ndescription: Review a release branch.\nallowed-tools: read(*), grep(*)\ntags: [git, release]\n---\nCheck the changelog first.\n',
  'skills/deploy/SKILL.md':
    '---\ndescription: Deploy the service to staging.\nkind: tool\n---\nRun the deploy script.\n',
  'skills/hidden.md': '---\ndescription: Release secrets.\ndisable-model-invocation: true\n---\nNever shown.\n',
  'skills/pirate.md':
    '---\nkind: persona\ndescription: Talk like a pirate release captain.\n---\nYou are Captain Skillbeard, a pirate.\n',
};

describe('skills: sources, search_skills, persona, live add/remove', () => {
  const start = useTestServers();

  it('search_skills finds a file skill and an inline skill in the seed ranking; persona and disabled skills are not found; the persona role and the catalog header reach the provider', async () => {
    const t = await start({ files: FILES });
    const id = await createSession(t, {
      skillDirs: ['skills'],
      inlineSkills: [
        {
          name: 'strict-release-review',
          kind: 'instruction',
          description: 'Separate blockers from nits.',
          content: 'Always separate blockers from nice-to-have improvements.',
          tags: ['review'],
        },
      ],
    });
    t.fake.script(
      {
        toolCalls: [
          { id: 's1', name: 'search_skills', arguments: { query: 'release review' } },
          { id: 's2', name: 'search_skills', arguments: { q: 'pirate captain', limit: 3 } },
          { id: 's3', name: 'search_skills', arguments: JSON.stringify('deploy') },
        ],
      },
      { text: 'done' },
    );
    const run = await runAndWait(t, id, 'review the release');
    expect(run.run.status).toBe('completed');
    // release-review: +100 (query contains the name "release-review"? no: "release review") -> tag "release" +80,
    // tokens release (+20 name, +15 tag, +8 description) and review (+20 name, +8 description) = 151;
    // strict-release-review: tag "review" +80, release (+20, +2 body), review (+20 +15 tag, +2 body) = 139.
    const first = toolMessage(t, 's1');
    expect(first).toBe(
      [
        'Found 2 matching skill(s). Invoke one with Skill using its skill_name.',
        '- release-review (instruction): Review a release branch. Allowed tools: read(*), grep(*).',
        '- strict-release-review (instruction): Separate blockers from nits. Allowed tools: none.',
      ].join('\n'),
    );
    expect(toolMessage(t, 's2')).toBe('No matching skills found. Continue with the core tools.');
    expect(toolMessage(t, 's3')).toContain('- deploy (tool): Deploy the service to staging.');
    const events = await runEvents(t, id, run.runId);
    const ends = ofType(events, 'tool_end').map((e) => e.payload as { tool_call_id?: string; metadata?: unknown });
    expect(JSON.stringify(ends)).toContain('"allowed_tools":["read(*)","grep(*)"]');
    const prompt = systemPromptOf(t, 0);
    expect(prompt).toContain('You are Captain Skillbeard, a pirate.');
    expect(prompt).toContain('## Skills');
    expect(prompt).toContain('search_skills');
    expect(prompt).not.toContain('Check the changelog first.');
    expect(offeredTools(t, 0)).toContain('search_skills');
    t.fake.assertDone();
  });

  it('a session without skills has no search_skills and no catalog header', async () => {
    const t = await start();
    const id = await createSession(t, { builtinSkills: true });
    t.fake.script({ text: 'hi' });
    await runAndWait(t, id, 'hello');
    expect(offeredTools(t)).not.toContain('search_skills');
    expect(systemPromptOf(t)).not.toContain('search_skills');
    expect((await request(t.url).get(`/v1/sessions/${id}/skills`).expect(200)).body).toEqual({ skills: [] });
  });

  it('adds and removes skills over REST; the tool follows; an unknown name is 404 SKILL_NOT_FOUND', async () => {
    const t = await start();
    const id = await createSession(t);
    const added = await request(t.url)
      .post(`/v1/sessions/${id}/skills`)
      .send({
        name: 'lint-fix',
        kind: 'instruction',
        description: 'Fix lint errors.',
        content: 'Run eslint --fix.',
        allowedTools: ['bash'],
      })
      .expect(201);
    expect(added.body.skill).toMatchObject({
      name: 'lint-fix',
      kind: 'instruction',
      allowed_tools: ['bash'],
      source: 'inline',
    });
    expect(
      (await request(t.url).get(`/v1/sessions/${id}/skills`).expect(200)).body.skills.map(
        (s: { name: string }) => s.name,
      ),
    ).toEqual(['lint-fix']);
    t.fake.script({ toolCalls: [{ id: 'l1', name: 'search_skills', arguments: { query: 'lint' } }] }, { text: 'ok' });
    await runAndWait(t, id, 'lint');
    expect(toolMessage(t, 'l1')).toContain('- lint-fix (instruction): Fix lint errors. Allowed tools: bash.');
    expect((await request(t.url).delete(`/v1/sessions/${id}/skills/lint-fix`).expect(200)).body).toEqual({
      skills: [],
    });
    const missing = await request(t.url).delete(`/v1/sessions/${id}/skills/lint-fix`).expect(404);
    expect(missing.body.error.code).toBe('SKILL_NOT_FOUND');
    expect(missing.body.error.message).toContain('"lint-fix"');
    t.fake.script({ text: 'gone' });
    await runAndWait(t, id, 'again');
    expect(offeredTools(t)).not.toContain('search_skills');
    const bad = await request(t.url)
      .post(`/v1/sessions/${id}/skills`)
      .send({ name: 'x', kind: 'wizard', content: 'y' })
      .expect(400);
    expect(JSON.stringify(bad.body.error)).toContain('kind');
  });

  it('refuses a skill dir outside the workspace and names the file and field of bad front matter', async () => {
    const outside = tempDir('outside-skills-');
    writeFiles(outside, { 'x.md': '---\nname: x\n---\nx' });
    const t = await start({ files: { 'skills/bad.md': '---\ntags: nope\n---\nbody\n' } });
    symlinkSync(outside, join(t.root, 'escape'));
    for (const dir of [outside, '../', 'escape']) {
      const res = await request(t.url)
        .post('/v1/sessions')
        .send({ skillDirs: [dir] })
        .expect(400);
      expect(res.body.error.code).toBe('SESSION_CONFIGURATION_ERROR');
      expect(res.body.error.message).toContain('skillDirs[0]');
      expect(res.body.error.message).toContain('outside the session');
    }
    const bad = await request(t.url)
      .post('/v1/sessions')
      .send({ skillDirs: ['skills'] })
      .expect(400);
    expect(bad.body.error.message).toContain('skills/bad.md: tags:');
    expect(bad.body.error.details).toMatchObject({ file: 'skills/bad.md', field: 'tags' });
  });

  it("the operator's skill_dirs are the session's too", async () => {
    const operator = tempDir('operator-skills-');
    writeFiles(operator, { 'ops.md': '---\ndescription: Operator runbook.\n---\nPage the on-call.' });
    const t = await start({ config: { skillDirs: [operator] } });
    const id = await createSession(t);
    expect((await request(t.url).get(`/v1/sessions/${id}/skills`).expect(200)).body.skills).toEqual([
      {
        name: 'ops',
        description: 'Operator runbook.',
        kind: 'instruction',
        tags: [],
        allowed_tools: [],
        version: null,
        disable_model_invocation: false,
        source: 'config',
      },
    ]);
  });
});

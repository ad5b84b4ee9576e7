import { existsSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createSession, runAndWait, toolMessage, useTestServers } from '../support/run-helpers.js';

const READER = {
  name: 'reader',
  description: 'Reads files',
  content: 'Only read.',
  allowedTools: 'read(*), grep(*)',
};

describe('enforceActiveSkillToolRestrictions: the session’s own calls are bound to the active skills', () => {
  const start = useTestServers();

  it('with an active skill, only its allowed-tools run; without the option, or with no active skill, all do', async () => {
    const t = await start({ files: { 'a.txt': 'alpha\n' } });
    const enforced = await createSession(t, { enforceActiveSkillToolRestrictions: true, inlineSkills: [READER] });
    t.fake.script(
      {
        toolCalls: [
          { id: 'r1', name: 'read', arguments: { file_path: 'a.txt' } },
          { id: 'w1', name: 'write', arguments: { file_path: 'w.txt', content: 'x' } },
        ],
      },
      { text: 'done' },
    );
    await runAndWait(t, enforced, 'go');
    expect(toolMessage(t, 'r1')).toContain('alpha');
    expect(toolMessage(t, 'w1')).toContain("Tool 'write' is not allowed by any active skill");
    expect(toolMessage(t, 'w1')).toContain("'reader'");
    expect(existsSync(join(t.root, 'w.txt'))).toBe(false);

    // The same options without enforcement: write runs.
    const free = await createSession(t, { inlineSkills: [READER] });
    t.fake.script(
      { toolCalls: [{ id: 'w2', name: 'write', arguments: { file_path: 'w2.txt', content: 'x' } }] },
      { text: 'done' },
    );
    await runAndWait(t, free, 'go');
    expect(existsSync(join(t.root, 'w2.txt'))).toBe(true);

    // A persona skill, or an instruction skill without allowed-tools, is not active: nothing is restricted.
    const none = await createSession(t, {
      enforceActiveSkillToolRestrictions: true,
      inlineSkills: [{ name: 'plain', description: 'No grants', content: 'x' }],
    });
    t.fake.script(
      { toolCalls: [{ id: 'w3', name: 'write', arguments: { file_path: 'w3.txt', content: 'x' } }] },
      { text: 'done' },
    );
    await runAndWait(t, none, 'go');
    expect(existsSync(join(t.root, 'w3.txt'))).toBe(true);
    t.fake.assertDone();
  });

  it('follows addSkill and removeSkill at once; governed direct calls are bound, host-direct calls are not', async () => {
    const t = await start({ files: { 'a.txt': 'alpha\n' } });
    const id = await createSession(t, { enforceActiveSkillToolRestrictions: true });
    const governed = async (name: string, args: Record<string, unknown>) =>
      (await request(t.url).post(`/v1/sessions/${id}/tools/${name}/governed`).send({ args }).expect(200)).body as {
        output: string;
        exitCode: number;
      };
    expect((await governed('write', { file_path: 'g1.txt', content: 'x' })).exitCode).toBe(0);
    await request(t.url).post(`/v1/sessions/${id}/skills`).send(READER).expect(201);
    const refused = await governed('write', { file_path: 'g2.txt', content: 'x' });
    expect(refused.exitCode).toBe(1);
    expect(refused.output).toContain("Tool 'write' is not allowed by any active skill (active: 'reader'");
    expect(existsSync(join(t.root, 'g2.txt'))).toBe(false);
    expect((await governed('read', { file_path: 'a.txt' })).output).toContain('alpha');
    const host = await request(t.url)
      .post(`/v1/sessions/${id}/tools/write`)
      .send({ args: { file_path: 'h.txt', content: 'x' } })
      .expect(200);
    expect(host.body.exitCode).toBe(0);
    await request(t.url).delete(`/v1/sessions/${id}/skills/reader`).expect(200);
    expect((await governed('write', { file_path: 'g3.txt', content: 'x' })).exitCode).toBe(0);
  });
});

import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { tempDir, type TestServer } from '../support/test-server.js';
import { createSession, ofType, runAndWait, runEvents, toolMessage, useTestServers } from '../support/run-helpers.js';

type Msg = { role: string; content?: unknown; tool_call_id?: string };

const systemPromptOf = (t: TestServer, index = -1) =>
  String((t.fake.requests.at(index)?.body.messages as Msg[])[0].content);

const REVIEWER_MD = `---
name: reviewer2
description: Reviews docs only
max_steps: 7
permissions:
  allow: [read, ls]
  deny: [write]
---
You are reviewer2. Only read the docs folder.
`;
const LINTER_YAML = `name: linter
description: Runs the linter
model: openai/lint-model
prompt: You are the linter agent.
`;

/** The shape of the seed smoke's agents/docs-dynamic.yaml: name, description, max_steps, permissions, no prompt. */
const DOCS_DYNAMIC_YAML = `name: docs-dynamic
description: Reads the docs folder and answers questions about it
max_steps: 4
permissions:
  allow:
    - read
    - grep
    - ls
  deny:
    - write
    - bash
`;

describe('agents: built-ins, definitions from directories, sessions for an agent', () => {
  const start = useTestServers();

  it('a session for explore: its prompt reaches the provider, read works, write is denied and nothing is written; agent_mode_changed and session info name it', async () => {
    // Even a fully permissive session policy cannot give the read-only agent more.
    const t = await start({
      files: { 'a.txt': 'hello\n' },
      config: { defaultPermissionPolicy: { allow: ['read', 'write', 'bash'], defaultDecision: 'allow' } },
    });
    const created = await request(t.url).post('/v1/sessions').send({ agent: 'explore' }).expect(201);
    expect(created.body.session.agent).toBe('explore');
    const id = created.body.session.id as string;
    expect((await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session.agent).toBe('explore');
    t.fake.script(
      {
        toolCalls: [
          { id: 'c_read', name: 'read', arguments: { file_path: 'a.txt' } },
          { id: 'c_write', name: 'write', arguments: { file_path: 'pwned.txt', content: 'x' } },
        ],
      },
      { text: 'done' },
    );
    const run = await runAndWait(t, id, 'look around');
    expect(run.run.status).toBe('completed');
    expect(toolMessage(t, 'c_read')).toContain('hello');
    expect(toolMessage(t, 'c_write')).toContain('agent policy: ');
    expect(existsSync(join(t.root, 'pwned.txt'))).toBe(false);
    expect(systemPromptOf(t)).toContain('You are the explore agent');
    // Tools the agent denies for every argument are not offered to the model.
    const offered = ((t.fake.requests[0].body.tools ?? []) as { function: { name: string } }[]).map(
      (x) => x.function.name,
    );
    expect(offered).toContain('read');
    expect(offered).not.toContain('write');
    expect(offered).not.toContain('bash');
    const events = await runEvents(t, id, run.runId);
    expect(ofType(events, 'permission_denied')[0]?.payload).toMatchObject({
      tool_name: 'write',
      rule: expect.stringContaining('agent policy: '),
    });
    const types = events.map((e) => e.type);
    expect(types.indexOf('agent_mode_changed')).toBe(types.indexOf('agent_start') + 1);
    expect(ofType(events, 'agent_mode_changed')[0].payload).toEqual({
      mode: 'explore',
      agent: 'explore',
      description: expect.stringContaining('read-only'),
    });
    t.fake.assertDone();
  });

  it('the agent bound never loosens the operator policy: a session for general keeps the operator deny', async () => {
    const t = await start({
      files: { 'a.txt': 'hello\n' },
      config: { defaultPermissionPolicy: { deny: ['write'], allow: ['read'], defaultDecision: 'ask' } },
    });
    const id = await createSession(t, { agent: 'general' });
    t.fake.script(
      { toolCalls: [{ id: 'w1', name: 'write', arguments: { file_path: 'b.txt', content: 'x' } }] },
      { text: 'ok' },
    );
    await runAndWait(t, id, 'write');
    expect(toolMessage(t, 'w1')).toContain('denied');
    expect(existsSync(join(t.root, 'b.txt'))).toBe(false);
    expect(systemPromptOf(t)).toContain('general-purpose agent');
  });

  it('unknown agent: 404 AGENT_NOT_FOUND naming it; nothing is created', async () => {
    const t = await start();
    const res = await request(t.url).post('/v1/sessions').send({ agent: 'nobody' }).expect(404);
    expect(res.body.error.code).toBe('AGENT_NOT_FOUND');
    expect(res.body.error.message).toContain('"nobody"');
    expect(res.body.error.details).toMatchObject({ field: 'agent', agent: 'nobody' });
    expect((await request(t.url).get('/v1/sessions').expect(200)).body.sessions).toEqual([]);
  });

  it('agentDirs at creation: a Markdown and a YAML definition, used for sessions (prompt, permissions, max steps, model); listed by GET .../agents', async () => {
    const t = await start({
      files: {
        'agents/reviewer2.md': REVIEWER_MD,
        'agents/linter.yaml': LINTER_YAML,
        'agents/notes.txt': 'ignored',
        'docs/x.md': 'doc\n',
      },
    });
    const created = await request(t.url)
      .post('/v1/sessions')
      .send({ agent: 'reviewer2', agentDirs: ['agents'] })
      .expect(201);
    const id = created.body.session.id as string;
    expect(created.body.session.agent).toBe('reviewer2');
    const agents = (await request(t.url).get(`/v1/sessions/${id}/agents`).expect(200)).body.agents as {
      name: string;
      source: string;
      readOnly: boolean;
      maxSteps: number | null;
      model: string | null;
    }[];
    expect(agents.map((a) => a.name)).toEqual([
      'general',
      'explore',
      'plan',
      'verification',
      'review',
      'linter',
      'reviewer2',
    ]);
    expect(agents.find((a) => a.name === 'reviewer2')).toMatchObject({
      source: 'session',
      readOnly: true,
      maxSteps: 7,
      model: null,
    });
    expect(agents.find((a) => a.name === 'linter')).toMatchObject({
      source: 'session',
      readOnly: false,
      model: 'openai/lint-model',
    });
    expect(agents.find((a) => a.name === 'explore')).toMatchObject({ source: 'builtin', readOnly: true });
    t.fake.script(
      {
        toolCalls: [
          { id: 'r1', name: 'read', arguments: { file_path: 'docs/x.md' } },
          { id: 'w1', name: 'write', arguments: { file_path: 'docs/y.md', content: 'x' } },
        ],
      },
      { text: 'ok' },
    );
    const run = await runAndWait(t, id, 'review');
    expect(toolMessage(t, 'r1')).toContain('doc');
    expect(toolMessage(t, 'w1')).toContain('agent policy: write');
    expect(existsSync(join(t.root, 'docs/y.md'))).toBe(false);
    expect(systemPromptOf(t)).toContain('You are reviewer2. Only read the docs folder.');
    expect(ofType(await runEvents(t, id, run.runId), 'agent_mode_changed')[0].payload).toEqual({
      mode: 'general',
      agent: 'reviewer2',
      description: 'Reviews docs only',
    });
    expect(
      t.server.ctx.agent.getSession(id, { principal: 'x', tenantId: 'default', scopes: new Set(['admin']) } as never)
        .config.governance.maxToolRounds,
    ).toBe(7);

    const linter = await createSession(t, { agent: 'linter', agentDirs: ['agents'] });
    t.fake.script({ text: 'linted' });
    await runAndWait(t, linter, 'lint');
    expect(t.fake.requests.at(-1)?.body.model).toBe('lint-model');
    expect(systemPromptOf(t)).toContain('You are the linter agent.');
    t.fake.assertDone();
  });

  it('POST .../agents/dirs registers a workspace directory; GET .../agents lists it; a session without agents has agent null', async () => {
    const t = await start({ files: { 'more/linter.yml': LINTER_YAML, 'more/reviewer2.md': REVIEWER_MD } });
    const id = await createSession(t);
    expect((await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session.agent).toBeNull();
    const before = (await request(t.url).get(`/v1/sessions/${id}/agents`).expect(200)).body.agents as {
      name: string;
    }[];
    expect(before.map((a) => a.name)).toEqual(['general', 'explore', 'plan', 'verification', 'review']);
    const res = await request(t.url).post(`/v1/sessions/${id}/agents/dirs`).send({ path: 'more' }).expect(200);
    expect(res.body.registered).toBe(2);
    expect((res.body.agents as { name: string }[]).map((a) => a.name)).toEqual([
      'general',
      'explore',
      'plan',
      'verification',
      'review',
      'linter',
      'reviewer2',
    ]);
    const after = (await request(t.url).get(`/v1/sessions/${id}/agents`).expect(200)).body.agents as { name: string }[];
    expect(after.map((a) => a.name)).toContain('linter');
  });

  it("a YAML definition without prompt (the seed smoke's agents/docs-dynamic.yaml) registers as 1; its description is its instructions", async () => {
    const t = await start({ files: { 'agents/docs-dynamic.yaml': DOCS_DYNAMIC_YAML, 'docs/x.md': 'doc\n' } });
    const id = await createSession(t);
    const res = await request(t.url).post(`/v1/sessions/${id}/agents/dirs`).send({ path: 'agents' }).expect(200);
    expect(res.body.registered).toBe(1);
    const listed = (await request(t.url).get(`/v1/sessions/${id}/agents`).expect(200)).body.agents as {
      name: string;
    }[];
    expect(listed.find((a) => a.name === 'docs-dynamic')).toEqual({
      name: 'docs-dynamic',
      description: 'Reads the docs folder and answers questions about it',
      source: 'session',
      mode: 'general',
      readOnly: true,
      model: null,
      maxSteps: 4,
      kind: null,
      hidden: false,
    });
    const forAgent = await createSession(t, { agent: 'docs-dynamic', agentDirs: ['agents'] });
    t.fake.script({ text: 'answered' });
    await runAndWait(t, forAgent, 'what is in docs?');
    expect(systemPromptOf(t)).toContain('Reads the docs folder and answers questions about it');
    t.fake.assertDone();
  });

  it('bad files are a 400 naming the file and the field; nothing is registered', async () => {
    const t = await start({
      files: {
        'bad1/a.md': '---\nname: ok1\ndescription: d\npermissions:\n  allow: [42]\n---\nbody\n',
        'bad2/b.yaml': 'name: "not a name!"\ndescription: d\nprompt: p\n',
        'bad3/c.md': '---\nname: explore\ndescription: d\n---\nshadow\n',
        'bad4/d.yaml': 'name: x1\ndescription: d\nprompt: p\ncolour: red\n',
        'bad5/e.md': '---\nname: x2\ndescription: [unclosed\n---\nbody\n',
        'bad6/f.md': '---\nname: x3\ndescription: d\n',
        'bad7/g.yaml': 'name: x4\ndescription: d\nprompt: p\npermissions:\n  deny: ["bad rule("]\n',
      },
    });
    const id = await createSession(t);
    const cases: [string, string, string | undefined][] = [
      ['bad1', 'bad1/a.md: permissions.allow.0:', 'permissions.allow.0'],
      ['bad2', 'bad2/b.yaml: name:', 'name'],
      ['bad3', 'bad3/c.md: name: "explore" is a built-in agent', 'name'],
      ['bad4', 'bad4/d.yaml: : colour: unknown key', undefined],
      ['bad5', 'bad5/e.md: invalid YAML', undefined],
      ['bad6', 'bad6/f.md: the front matter opened by "---" on line 1 is never closed', undefined],
      ['bad7', 'bad7/g.yaml: permissions.deny.0: invalid permission rule', 'permissions.deny.0'],
    ];
    for (const [dir, message, field] of cases) {
      const res = await request(t.url).post(`/v1/sessions/${id}/agents/dirs`).send({ path: dir }).expect(400);
      expect(res.body.error.code, dir).toBe('VALIDATION_ERROR');
      expect(res.body.error.message.replace(/^bad4\/d\.yaml: /, 'bad4/d.yaml: : '), dir).toContain(message);
      expect(res.body.error.details.file, dir).toBe(message.split(':')[0]);
      if (field) expect(res.body.error.details.field, dir).toBe(field);
    }
    expect(((await request(t.url).get(`/v1/sessions/${id}/agents`).expect(200)).body.agents as unknown[]).length).toBe(
      5,
    );
    // At creation the same file is a 400 naming it, and no session is created.
    const created = await request(t.url)
      .post('/v1/sessions')
      .send({ agentDirs: ['bad1'] })
      .expect(400);
    expect(created.body.error.code).toBe('SESSION_CONFIGURATION_ERROR');
    expect(created.body.error.message).toContain('bad1/a.md: permissions.allow.0:');
  });

  it('directories outside the workspace, and symlinks leaving the directory, are refused', async () => {
    const outside = tempDir('a3s-outside-');
    writeFileSync(join(outside, 'evil.yaml'), LINTER_YAML);
    const t = await start({ files: { 'ws/agents/ok.yaml': 'name: ok\ndescription: d\nprompt: p\n' } });
    const workspace = join(t.root, 'ws');
    mkdirSync(join(workspace, 'linked'));
    symlinkSync(join(outside, 'evil.yaml'), join(workspace, 'linked', 'evil.yaml'));
    symlinkSync(outside, join(workspace, 'escape'));
    const id = await createSession(t, { workspace });
    for (const path of [outside, '../', 'escape']) {
      const res = await request(t.url).post(`/v1/sessions/${id}/agents/dirs`).send({ path }).expect(400);
      expect(res.body.error.message, path).toContain("outside the session's workspace");
      expect(res.body.error.details.field).toBe('path');
    }
    const link = await request(t.url).post(`/v1/sessions/${id}/agents/dirs`).send({ path: 'linked' }).expect(400);
    expect(link.body.error.message).toBe('linked/evil.yaml: a symlink leaving the agent directory is refused');
    const missing = await request(t.url).post(`/v1/sessions/${id}/agents/dirs`).send({ path: 'nope' }).expect(400);
    expect(missing.body.error.message).toContain('does not exist');
    const atCreation = await request(t.url)
      .post('/v1/sessions')
      .send({ workspace, agentDirs: ['agents', outside] })
      .expect(400);
    expect(atCreation.body.error.details.field).toBe('agentDirs[1]');
    expect(
      (await request(t.url).post(`/v1/sessions/${id}/agents/dirs`).send({ path: 'agents' }).expect(200)).body
        .registered,
    ).toBe(1);
  });

  it("the operator's agent_dirs are loaded for every session (source config)", async () => {
    const dir = tempDir('a3s-op-agents-');
    writeFileSync(join(dir, 'ops.md'), '---\nname: ops\ndescription: Operator agent\n---\nYou are ops.\n');
    const t = await start({ config: { agentDirs: [dir] } });
    const created = await request(t.url).post('/v1/sessions').send({ agent: 'ops' }).expect(201);
    expect(created.body.session.initWarning).toBeNull();
    const agents = (await request(t.url).get(`/v1/sessions/${created.body.session.id}/agents`).expect(200)).body
      .agents as { name: string; source: string }[];
    expect(agents.find((a) => a.name === 'ops')?.source).toBe('config');
  });

  it('a resumed session keeps its agent: prompt, permissions and session info', async () => {
    const first = await start({ files: { 'agents/reviewer2.md': REVIEWER_MD, 'docs/x.md': 'doc\n' } });
    await request(first.url)
      .post('/v1/sessions')
      .send({ sessionId: 'agent-resume', agent: 'reviewer2', agentDirs: ['agents'], autoSave: true })
      .expect(201);
    first.fake.script({ text: 'first' });
    await runAndWait(first, 'agent-resume', 'hi');
    await first.close();
    const t = await start({ dataDir: first.dataDir, root: first.root });
    const resumed = await request(t.url)
      .post('/v1/sessions')
      .send({ sessionId: 'agent-resume', resume: true })
      .expect(201);
    expect(resumed.body.session.agent).toBe('reviewer2');
    expect(resumed.body.session.messageCount).toBe(2);
    t.fake.script(
      { toolCalls: [{ id: 'w2', name: 'write', arguments: { file_path: 'docs/z.md', content: 'x' } }] },
      { text: 'ok' },
    );
    const run = await runAndWait(t, 'agent-resume', 'again');
    expect(toolMessage(t, 'w2')).toContain('agent policy: write');
    expect(existsSync(join(t.root, 'docs/z.md'))).toBe(false);
    expect(systemPromptOf(t)).toContain('You are reviewer2.');
    expect(ofType(await runEvents(t, 'agent-resume', run.runId), 'agent_mode_changed')).toHaveLength(1);
    t.fake.assertDone();
  });
});

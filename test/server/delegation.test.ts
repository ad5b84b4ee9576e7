import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { echoServerConfig, groupGone, waitFor } from '../mcp/mcp-test-helpers.js';
import { startFakeProvider, type RecordedRequest } from '../support/fake-provider.js';
import { tempDir } from '../support/test-server.js';
import {
  createSession,
  eventually,
  ofType,
  runAndWait,
  runEvents,
  startRun,
  toolMessage,
  useTestServers,
} from '../support/run-helpers.js';

type Msg = { role: string; content?: unknown; tool_call_id?: string };

const messagesOf = (r: RecordedRequest) => r.body.messages as Msg[];
/** The prompt of the run a request belongs to: its last user message. */
const runPrompt = (r: RecordedRequest) => String(messagesOf(r).findLast((m) => m.role === 'user')?.content ?? '');
/** A child's first request (its prompt, no tool result yet). */
const childStart = (prompt: string) => (r: RecordedRequest) =>
  runPrompt(r).startsWith(prompt) && messagesOf(r).at(-1)?.role === 'user';
/** A request that comes after a tool round of the run whose prompt is `prompt`. */
const afterTool = (prompt: string) => (r: RecordedRequest) =>
  runPrompt(r).startsWith(prompt) && messagesOf(r).at(-1)?.role === 'tool';

const OPEN_POLICY = {
  allow: ['read', 'ls', 'grep', 'glob', 'task', 'parallel_task', 'Skill', 'search_skills'],
  ask: ['write'],
  defaultDecision: 'deny',
};

describe('delegation: task, parallel_task and Skill run real child sessions', () => {
  const start = useTestServers();

  it('a parent delegates to explore: the child reads, its write is denied, the parent gets the answer; subagent events, task snapshots and the child session', async () => {
    const t = await start({
      files: { 'a.txt': 'alpha\n' },
      config: { defaultPermissionPolicy: { allow: ['read', 'write', 'task'], defaultDecision: 'allow' } },
    });
    const id = await createSession(t);
    t.fake.script(
      {
        when: childStart('look'),
        toolCalls: [
          {
            id: 'parent_task',
            name: 'task',
            arguments: { agent: 'explore', description: 'read a.txt', prompt: 'Read a.txt and say what is in it' },
          },
        ],
      },
      {
        when: childStart('Read a.txt'),
        toolCalls: [
          { id: 'child_read', name: 'read', arguments: { file_path: 'a.txt' } },
          { id: 'child_write', name: 'write', arguments: { file_path: 'pwned.txt', content: 'x' } },
        ],
      },
      { when: afterTool('Read a.txt'), text: 'a.txt says alpha' },
      { when: afterTool('look'), text: 'the child found alpha' },
    );
    const run = await runAndWait(t, id, 'look');
    expect(run.run.status).toBe('completed');
    expect(run.run.result?.text).toBe('the child found alpha');
    t.fake.assertDone();
    // The child is an explore session: its prompt, its read-only bound (write denied even though the parent's policy allows it).
    const childRequest = t.fake.requests.find(childStart('Read a.txt'))!;
    expect(String(messagesOf(childRequest)[0]!.content)).toContain('You are the explore agent');
    expect(toolMessage(t, 'child_read')).toContain('alpha');
    expect(toolMessage(t, 'child_write')).toContain('agent policy: ');
    expect(existsSync(join(t.root, 'pwned.txt'))).toBe(false);
    // The parent's model sees the child's answer as the task's result.
    expect(toolMessage(t, 'parent_task')).toBe('a.txt says alpha');
    const events = await runEvents(t, id, run.runId);
    const started = ofType(events, 'subagent_start')[0]!.payload as Record<string, unknown>;
    expect(started).toMatchObject({ parent_session_id: id, agent: 'explore', description: 'read a.txt' });
    expect(ofType(events, 'subagent_progress').length).toBe(2);
    expect(ofType(events, 'subagent_end')[0]!.payload).toMatchObject({
      task_id: started.task_id,
      session_id: started.session_id,
      agent: 'explore',
      output: 'a.txt says alpha',
      success: true,
    });
    const toolEnd = ofType(events, 'tool_end').find((e) => (e.payload as { id: string }).id === 'parent_task')!;
    expect(toolEnd.payload).toMatchObject({ name: 'task', exit_code: 0 });
    // Task snapshots on the parent; the child is a session of its own, linked to the parent.
    const tasks = (await request(t.url).get(`/v1/sessions/${id}/tasks`).expect(200)).body.tasks as Record<
      string,
      unknown
    >[];
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({
      task_id: started.task_id,
      session_id: started.session_id,
      status: 'completed',
      success: true,
      output: 'a.txt says alpha',
      kind: 'task',
      parent_run_id: run.runId,
    });
    expect(
      (
        await request(t.url)
          .get(`/v1/sessions/${id}/tasks/${String(started.task_id)}`)
          .expect(200)
      ).body.status,
    ).toBe('completed');
    const child = (
      await request(t.url)
        .get(`/v1/sessions/${String(started.session_id)}`)
        .expect(200)
    ).body.session;
    expect(child).toMatchObject({ agent: 'explore', parentSessionId: id });
    const childRuns = (
      await request(t.url)
        .get(`/v1/sessions/${String(started.session_id)}/runs`)
        .expect(200)
    ).body.runs as { runId: string }[];
    const childEvents = await runEvents(t, String(started.session_id), childRuns[0]!.runId);
    expect(ofType(childEvents, 'permission_denied')[0]?.payload).toMatchObject({ tool_name: 'write' });
    // Closing the parent closes its child.
    await request(t.url).delete(`/v1/sessions/${id}`).expect(200);
    expect((await request(t.url).get(`/v1/sessions/${String(started.session_id)}`)).status).toBe(410);
  });

  it('parallel_task runs two children concurrently and reports both; a failing child fails the call unless partial failure is allowed', async () => {
    const t = await start({
      files: { 'a.txt': 'alpha\n', 'b.txt': 'beta\n' },
      config: { defaultPermissionPolicy: OPEN_POLICY },
    });
    const id = await createSession(t);
    const tasks = [
      { agent: 'general', description: 'read a', prompt: 'child A: read a.txt' },
      { agent: 'general', description: 'read b', prompt: 'child B: read b.txt' },
    ];
    t.fake.script(
      { when: childStart('go'), toolCalls: [{ id: 'p1', name: 'parallel_task', arguments: { tasks } }] },
      // Both children ask before either answers: they run at the same time.
      {
        when: childStart('child A'),
        delayMs: 150,
        toolCalls: [{ id: 'ra', name: 'read', arguments: { file_path: 'a.txt' } }],
      },
      {
        when: childStart('child B'),
        delayMs: 150,
        toolCalls: [{ id: 'rb', name: 'read', arguments: { file_path: 'b.txt' } }],
      },
      { when: afterTool('child A'), text: 'A=alpha' },
      { when: afterTool('child B'), text: 'B=beta' },
      { when: afterTool('go'), text: 'both done' },
    );
    const began = Date.now();
    const run = await runAndWait(t, id, 'go');
    expect(run.run.status).toBe('completed');
    expect(Date.now() - began).toBeLessThan(2000);
    t.fake.assertDone();
    const out = toolMessage(t, 'p1');
    expect(out).toContain('2 of 2 tasks succeeded');
    expect(out).toContain('A=alpha');
    expect(out).toContain('B=beta');
    const firstChildRequests = t.fake.requests
      .map((r, index) => ({ r, index }))
      .filter(({ r }) => childStart('child ')(r));
    const firstAnswer = t.fake.requests.findIndex(afterTool('child '));
    expect(firstChildRequests.every(({ index }) => index < firstAnswer)).toBe(true);
    const events = await runEvents(t, id, run.runId);
    expect(ofType(events, 'subagent_start')).toHaveLength(2);
    expect(ofType(events, 'subagent_end').map((e) => (e.payload as { success: boolean }).success)).toEqual([
      true,
      true,
    ]);

    // A child that fails (its provider call errors) fails the call by default, and passes with allow_partial_failure.
    for (const allow of [false, true]) {
      const prompt = `round ${String(allow)}`;
      t.fake.script(
        {
          when: childStart(prompt),
          toolCalls: [
            {
              id: `pp_${String(allow)}`,
              name: 'parallel_task',
              arguments: {
                tasks: [
                  { ...tasks[0]!, prompt: `ok ${prompt}` },
                  { ...tasks[1]!, prompt: `bad ${prompt}` },
                ],
                allow_partial_failure: allow,
              },
            },
          ],
        },
        { when: childStart(`ok ${prompt}`), text: 'fine' },
        { when: childStart(`bad ${prompt}`), error: { status: 400, message: 'child provider refused' } },
        { when: afterTool(prompt), text: 'noted' },
      );
      const finished = await runAndWait(t, id, prompt);
      expect(finished.run.error).toBeUndefined();
      const result = toolMessage(t, `pp_${String(allow)}`);
      expect(result).toContain('1 of 2 tasks succeeded');
      const end = ofType(
        await runEvents(t, id, (await request(t.url).get(`/v1/sessions/${id}/runs`)).body.runs.at(-1).runId),
        'tool_end',
      ).find((e) => (e.payload as { id: string }).id === `pp_${String(allow)}`)!;
      expect((end.payload as { exit_code: number }).exit_code).toBe(allow ? 0 : 1);
    }
    t.fake.assertDone();
  });

  it('cancelling the parent run cancels its children at once: their provider requests are aborted within 1 s', async () => {
    const t = await start({ config: { defaultPermissionPolicy: OPEN_POLICY } });
    const id = await createSession(t);
    const tasks = [1, 2].map((n) => ({ agent: 'general', description: `hang ${n}`, prompt: `hang ${n}` }));
    t.fake.script(
      { when: childStart('fan out'), toolCalls: [{ id: 'pc', name: 'parallel_task', arguments: { tasks } }] },
      { when: childStart('hang 1'), hang: true },
      { when: childStart('hang 2'), hang: true },
    );
    const runId = await startRun(t, id, 'fan out');
    await t.fake.waitForRequests(3);
    const cancelledAt = Date.now();
    await request(t.url).post(`/v1/sessions/${id}/runs/${runId}/cancel`).expect(200);
    await eventually(
      () => t.fake.requests.filter((r) => runPrompt(r).startsWith('hang')).every((r) => r.abortedAtMs !== undefined),
      'child requests aborted',
      1000,
    );
    for (const r of t.fake.requests.filter((x) => runPrompt(x).startsWith('hang')))
      expect(r.abortedAtMs! - cancelledAt).toBeLessThan(1000);
    await eventually(
      async () => (await request(t.url).get(`/v1/sessions/${id}/runs/${runId}`)).body.run.status === 'cancelled',
      'parent cancelled',
    );
    await eventually(
      async () =>
        ((await request(t.url).get(`/v1/sessions/${id}/tasks`)).body.tasks as { status: string }[]).every(
          (task) => task.status === 'cancelled',
        ),
      'tasks cancelled',
    );
    t.fake.assertDone();
  });

  it("a child's confirmation surfaces on the parent's confirmations route and is answered there (inherit_parent)", async () => {
    const t = await start({
      config: {
        defaultPermissionPolicy: OPEN_POLICY,
        defaultConfirmationPolicy: { enabled: true, defaultTimeoutMs: 30_000 },
      },
    });
    const id = await createSession(t);
    t.fake.script(
      {
        when: childStart('write it'),
        toolCalls: [
          {
            id: 'pt',
            name: 'task',
            arguments: { agent: 'general', description: 'write', prompt: 'child: write out.txt' },
          },
        ],
      },
      {
        when: childStart('child: write'),
        toolCalls: [{ id: 'cw', name: 'write', arguments: { file_path: 'out.txt', content: 'approved' } }],
      },
      { when: afterTool('child: write'), text: 'written' },
      { when: afterTool('write it'), text: 'ok' },
    );
    const runId = await startRun(t, id, 'write it');
    let pending: { toolId: string; toolName: string }[] = [];
    await eventually(async () => {
      pending = (await request(t.url).get(`/v1/sessions/${id}/confirmations`).expect(200)).body.confirmations;
      return pending.length === 1;
    }, "the child's ask on the parent");
    expect(pending[0]).toMatchObject({ toolId: 'cw', toolName: 'write' });
    await request(t.url).post(`/v1/sessions/${id}/confirmations/cw`).send({ approved: true }).expect(200);
    await eventually(
      async () => (await request(t.url).get(`/v1/sessions/${id}/runs/${runId}`)).body.run.status === 'completed',
      'parent completed',
    );
    expect(readFileSync(join(t.root, 'out.txt'), 'utf8')).toBe('approved');
    const events = await runEvents(t, id, runId);
    expect(ofType(events, 'confirmation_required')[0]?.payload).toMatchObject({ tool_id: 'cw', tool_name: 'write' });
    expect(ofType(events, 'confirmation_received')[0]?.payload).toMatchObject({ tool_id: 'cw', approved: true });
    t.fake.assertDone();
  });

  it('deny_on_ask (operator config) denies what a child would ask', async () => {
    const t = await start({
      config: {
        defaultPermissionPolicy: OPEN_POLICY,
        defaultConfirmationPolicy: { enabled: true },
        delegation: { maxDepth: 3, confirmationInheritance: 'deny_on_ask' },
      },
    });
    const id = await createSession(t);
    t.fake.script(
      {
        when: childStart('try'),
        toolCalls: [
          { id: 'pt', name: 'task', arguments: { agent: 'general', description: 'write', prompt: 'kid: write' } },
        ],
      },
      {
        when: childStart('kid: write'),
        toolCalls: [{ id: 'kw', name: 'write', arguments: { file_path: 'no.txt', content: 'x' } }],
      },
      { when: afterTool('kid: write'), text: 'could not' },
      { when: afterTool('try'), text: 'ok' },
    );
    await runAndWait(t, id, 'try');
    expect(toolMessage(t, 'kw')).toContain('deny_on_ask');
    expect(existsSync(join(t.root, 'no.txt'))).toBe(false);
    t.fake.assertDone();
  });

  it("children spend the parent's budget: tokens used by a child count against the parent session", async () => {
    const t = await start({ config: { defaultPermissionPolicy: OPEN_POLICY } });
    const id = await createSession(t, { budget: { maxTokens: 20_000 } });
    t.fake.script(
      {
        when: childStart('spend'),
        usage: { prompt_tokens: 50, completion_tokens: 10 },
        toolCalls: [
          { id: 'pt', name: 'task', arguments: { agent: 'general', description: 'spend', prompt: 'kid spends' } },
        ],
      },
      { when: childStart('kid spends'), usage: { prompt_tokens: 30_000, completion_tokens: 100 }, text: 'spent' },
    );
    const run = await runAndWait(t, id, 'spend');
    // 60 (parent) + 30,100 (child) > 20,000: the parent's next provider call is refused by its own budget.
    expect(run.run.status).toBe('failed');
    expect(run.run.error?.code).toBe('BUDGET_EXHAUSTED');
    t.fake.assertDone();
  });

  it('a task inside a task deeper than delegation.max_depth is refused with a clear tool error', async () => {
    const t = await start({
      config: {
        defaultPermissionPolicy: OPEN_POLICY,
        delegation: { maxDepth: 1, confirmationInheritance: 'inherit_parent' },
      },
    });
    const id = await createSession(t);
    t.fake.script(
      {
        when: childStart('nest'),
        toolCalls: [
          { id: 'p', name: 'task', arguments: { agent: 'general', description: 'nest', prompt: 'level one' } },
        ],
      },
      {
        when: childStart('level one'),
        toolCalls: [
          { id: 'deep', name: 'task', arguments: { agent: 'general', description: 'deeper', prompt: 'level two' } },
        ],
      },
      { when: afterTool('level one'), text: 'could not nest' },
      { when: afterTool('nest'), text: 'ok' },
    );
    await runAndWait(t, id, 'nest');
    expect(toolMessage(t, 'deep')).toContain('delegation depth limit reached');
    expect(toolMessage(t, 'deep')).toContain('max_depth is 1');
    t.fake.assertDone();
  });

  it('bad task arguments are tool errors the model sees: unknown agent, too few parallel tasks', async () => {
    const t = await start({ config: { defaultPermissionPolicy: OPEN_POLICY } });
    const id = await createSession(t);
    t.fake.script(
      {
        toolCalls: [
          { id: 'u', name: 'task', arguments: { agent: 'nobody', description: 'x', prompt: 'y' } },
          {
            id: 'few',
            name: 'parallel_task',
            arguments: { tasks: [{ agent: 'general', description: 'x', prompt: 'y' }] },
          },
        ],
      },
      { text: 'ok' },
    );
    await runAndWait(t, id, 'bad');
    expect(toolMessage(t, 'u')).toContain('agent: no agent named "nobody"');
    expect(toolMessage(t, 'few')).toMatch(/tasks/);
    t.fake.assertDone();
  });

  it('background: true returns a task id at once; the result is read from GET .../tasks/:taskId', async () => {
    const t = await start({ config: { defaultPermissionPolicy: OPEN_POLICY } });
    const id = await createSession(t);
    t.fake.script(
      {
        when: childStart('later'),
        toolCalls: [
          {
            id: 'bg',
            name: 'task',
            arguments: { agent: 'general', description: 'slow', prompt: 'slow kid', background: true },
          },
        ],
      },
      { when: afterTool('later'), text: 'started it' },
      { when: childStart('slow kid'), delayMs: 300, text: 'slow answer' },
    );
    const run = await runAndWait(t, id, 'later');
    expect(run.run.status).toBe('completed');
    const started = toolMessage(t, 'bg');
    const taskId = /Task (\S+) started in the background/.exec(started)?.[1];
    expect(taskId).toBeDefined();
    await eventually(
      async () => (await request(t.url).get(`/v1/sessions/${id}/tasks/${taskId!}`)).body.status === 'completed',
      'background task done',
    );
    expect((await request(t.url).get(`/v1/sessions/${id}/tasks/${taskId!}`)).body).toMatchObject({
      output: 'slow answer',
      success: true,
      background: true,
    });
    t.fake.assertDone();
  });

  it('a Skill run can use only its allowed-tools: read works, write is refused by the active-skill restriction', async () => {
    const t = await start({
      files: { 'a.txt': 'alpha\n' },
      config: { defaultPermissionPolicy: { allow: ['read', 'write', 'Skill'], defaultDecision: 'allow' } },
    });
    const id = await createSession(t, {
      inlineSkills: [
        {
          name: 'reader',
          description: 'Reads files',
          content: 'Read the file you are told to.',
          allowedTools: 'read(*)',
        },
      ],
    });
    t.fake.script(
      {
        when: childStart('use skill'),
        toolCalls: [{ id: 'sk', name: 'Skill', arguments: { skill_name: 'reader', prompt: 'skill: read a.txt' } }],
      },
      {
        when: childStart('skill: read'),
        toolCalls: [
          { id: 'sr', name: 'read', arguments: { file_path: 'a.txt' } },
          { id: 'sw', name: 'write', arguments: { file_path: 'w.txt', content: 'x' } },
        ],
      },
      { when: afterTool('skill: read'), text: 'read alpha' },
      { when: afterTool('use skill'), text: 'ok' },
    );
    await runAndWait(t, id, 'use skill');
    expect(toolMessage(t, 'sr')).toContain('alpha');
    expect(toolMessage(t, 'sw')).toContain('not allowed by any active skill');
    expect(existsSync(join(t.root, 'w.txt'))).toBe(false);
    expect(toolMessage(t, 'sk')).toBe('read alpha');
    const childPrompt = String(messagesOf(t.fake.requests.find(childStart('skill: read'))!)[0]!.content);
    expect(childPrompt).toContain("You are executing the 'reader' skill");
    // Only the allowed tools are offered to the skill's child.
    const offered = (
      (t.fake.requests.find(childStart('skill: read'))!.body.tools ?? []) as { function: { name: string } }[]
    ).map((x) => x.function.name);
    expect(offered).toContain('read');
    t.fake.assertDone();
  });

  it('host tasks: POST .../tasks runs one task or several, needs host_direct, and bad bodies and unknown task ids are named', async () => {
    const HOST = 'token-delegation-host-000001';
    const USER = 'token-delegation-user-000001';
    const t = await start({
      config: {
        defaultPermissionPolicy: OPEN_POLICY,
        delegation: { maxDepth: 3, confirmationInheritance: 'inherit_parent', keepFinishedChildren: 1 },
        apiTokens: [
          { token: HOST, principal: 'host', tenantId: 't1', scopes: ['sessions', 'host_direct'] },
          { token: USER, principal: 'user', tenantId: 't1', scopes: ['sessions'] },
        ],
      },
    });
    const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
    const id = (await request(t.url).post('/v1/sessions').set(auth(HOST)).send({}).expect(201)).body.session
      .id as string;
    const denied = await request(t.url)
      .post(`/v1/sessions/${id}/tasks`)
      .set(auth(USER))
      .send({ agent: 'general', description: 'd', prompt: 'p' })
      .expect(403);
    expect(denied.body.error.code).toBe('FORBIDDEN');
    t.fake.script({ when: childStart('host one'), text: 'one done' });
    const one = await request(t.url)
      .post(`/v1/sessions/${id}/tasks`)
      .set(auth(HOST))
      .send({ agent: 'plan', description: 'plan it', prompt: 'host one' })
      .expect(200);
    expect(one.body).toMatchObject({
      name: 'task',
      output: 'one done',
      exitCode: 0,
      metadata: { agent: 'plan', success: true },
    });
    t.fake.script({ when: childStart('host a'), text: 'a' }, { when: childStart('host b'), text: 'b' });
    const many = await request(t.url)
      .post(`/v1/sessions/${id}/tasks`)
      .set(auth(HOST))
      .send({
        tasks: [
          { agent: 'general', description: 'a', prompt: 'host a' },
          { agent: 'general', description: 'b', prompt: 'host b' },
        ],
        allowPartialFailure: false,
      })
      .expect(200);
    expect(many.body).toMatchObject({ name: 'parallel_task', exitCode: 0, metadata: { succeeded: 2, total: 2 } });
    const listed = (await request(t.url).get(`/v1/sessions/${id}/tasks`).set(auth(USER)).expect(200)).body.tasks as {
      parent_run_id: string | null;
      session_id: string;
    }[];
    expect(listed).toHaveLength(3);
    expect(listed.every((task) => task.parent_run_id === null)).toBe(true);
    // keep_finished_children 1: only the newest finished child is still a live session; the tasks stay.
    const statuses = await Promise.all(
      listed.map(async (task) => (await request(t.url).get(`/v1/sessions/${task.session_id}`).set(auth(USER))).status),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 410)).toHaveLength(2);
    const bad = await request(t.url)
      .post(`/v1/sessions/${id}/tasks`)
      .set(auth(HOST))
      .send({ agent: 'general', description: 'd' })
      .expect(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    const missing = await request(t.url).get(`/v1/sessions/${id}/tasks/task_nope`).set(auth(USER)).expect(404);
    expect(missing.body.error.code).toBe('TASK_NOT_FOUND');
    t.fake.assertDone();
  });

  it('subagent task snapshots are part of the parent snapshot and survive a restart', async () => {
    const dataDir = tempDir('a3s-deleg-');
    const fake = await startFakeProvider();
    try {
      const first = await start({ dataDir, fake, config: { defaultPermissionPolicy: OPEN_POLICY } });
      const id = await createSession(first, { autoSave: true });
      fake.script(
        {
          when: childStart('remember'),
          toolCalls: [
            { id: 'pt', name: 'task', arguments: { agent: 'general', description: 'answer', prompt: 'persisted kid' } },
          ],
        },
        { when: childStart('persisted kid'), text: 'kept answer' },
        { when: afterTool('remember'), text: 'ok' },
      );
      await runAndWait(first, id, 'remember');
      const before = (await request(first.url).get(`/v1/sessions/${id}/tasks`).expect(200)).body.tasks;
      await first.close();
      const second = await start({ dataDir, fake, root: first.root, config: { defaultPermissionPolicy: OPEN_POLICY } });
      const after = (await request(second.url).get(`/v1/sessions/${id}/tasks`).expect(200)).body.tasks;
      expect(after).toEqual(before);
      expect(after[0]).toMatchObject({ status: 'completed', output: 'kept answer', success: true });
      fake.assertDone();
    } finally {
      await fake.close();
    }
  });

  it("auto_approve is the host's choice only: a host-direct task approves its child's asks without a human; the model's tasks ask", async () => {
    const HOST = 'token-delegation-auto-00001';
    const USER = 'token-delegation-auto-00002';
    const t = await start({
      config: {
        defaultPermissionPolicy: OPEN_POLICY,
        defaultConfirmationPolicy: { enabled: true, defaultTimeoutMs: 30_000 },
        apiTokens: [
          { token: HOST, principal: 'ci', tenantId: 't1', scopes: ['sessions', 'host_direct'] },
          { token: USER, principal: 'web', tenantId: 't1', scopes: ['sessions'] },
        ],
      },
    });
    const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
    const id = (await request(t.url).post('/v1/sessions').set(auth(USER)).send({}).expect(201)).body.session
      .id as string;
    // Only host_direct callers reach the route that can choose auto_approve.
    const refused = await request(t.url)
      .post(`/v1/sessions/${id}/tasks`)
      .set(auth(USER))
      .send({ agent: 'general', description: 'w', prompt: 'auto kid', confirmationInheritance: 'auto_approve' })
      .expect(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');
    t.fake.script(
      {
        when: childStart('auto kid'),
        toolCalls: [{ id: 'aw', name: 'write', arguments: { file_path: 'auto.txt', content: 'yes' } }],
      },
      { when: afterTool('auto kid'), text: 'wrote' },
    );
    const done = await request(t.url)
      .post(`/v1/sessions/${id}/tasks`)
      .set(auth(HOST))
      .send({ agent: 'general', description: 'w', prompt: 'auto kid', confirmationInheritance: 'auto_approve' })
      .expect(200);
    expect(done.body).toMatchObject({ name: 'task', exitCode: 0, output: 'wrote' });
    expect(readFileSync(join(t.root, 'auto.txt'), 'utf8')).toBe('yes');
    expect(
      (await request(t.url).get(`/v1/sessions/${id}/confirmations`).set(auth(USER)).expect(200)).body.confirmations,
    ).toEqual([]);
    // The model cannot ask for it: confirmationInheritance is not a task argument.
    t.fake.script(
      {
        toolCalls: [
          {
            id: 'mt',
            name: 'task',
            arguments: { agent: 'general', description: 'w', prompt: 'x', confirmationInheritance: 'auto_approve' },
          },
        ],
      },
      { text: 'ok' },
    );
    await request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .set(auth(USER))
      .send({ input: 'sneak', wait: true })
      .expect(200);
    expect(toolMessage(t, 'mt')).toMatch(/confirmationInheritance/);
    t.fake.assertDone();
  });

  it("children see the parent's MCP servers without owning them: a child's close leaves the parent's server running", async () => {
    const HOST = 'token-delegation-mcp-000001';
    const t = await start({
      config: {
        sandbox: { hostDirect: 'none' },
        defaultPermissionPolicy: {
          allow: ['task', 'mcp__echo__get_secret', 'mcp__echo__spawn_child'],
          defaultDecision: 'deny',
        },
        delegation: { maxDepth: 3, confirmationInheritance: 'inherit_parent', keepFinishedChildren: 0 },
        apiTokens: [{ token: HOST, principal: 'ci', tenantId: 't1', scopes: ['sessions', 'host_direct'] }],
      },
    });
    const auth = { Authorization: `Bearer ${HOST}` };
    const createdRes = await request(t.url).post('/v1/sessions').set(auth).send({});
    expect(createdRes.body.error).toBeUndefined();
    const id = createdRes.body.session.id as string;
    const added = await request(t.url)
      .post(`/v1/sessions/${id}/mcp`)
      .set(auth)
      .send(echoServerConfig('echo', 'parent-secret'));
    expect(added.body).toMatchObject({ name: 'echo' });
    const spawned = Number(
      (
        await request(t.url)
          .post(`/v1/sessions/${id}/tools/mcp__echo__spawn_child`)
          .set(auth)
          .send({ args: {} })
          .expect(200)
      ).body.output,
    );
    const stat = readFileSync(`/proc/${spawned}/stat`, 'utf8');
    const pgid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
    t.fake.script(
      { when: childStart('mcp kid'), toolCalls: [{ id: 'ms', name: 'mcp__echo__get_secret', arguments: {} }] },
      { when: afterTool('mcp kid'), text: 'got it' },
    );
    await request(t.url)
      .post(`/v1/sessions/${id}/tasks`)
      .set(auth)
      .send({ agent: 'general', description: 'mcp', prompt: 'mcp kid' })
      .expect(200);
    expect(toolMessage(t, 'ms')).toBe('parent-secret');
    // keep_finished_children 0: the child session is closed at once; the parent's server lives on.
    const childId = (
      (await request(t.url).get(`/v1/sessions/${id}/tasks`).set(auth)).body.tasks as { session_id: string }[]
    )[0]!.session_id;
    await eventually(
      async () => (await request(t.url).get(`/v1/sessions/${childId}`).set(auth)).status === 410,
      'child closed',
    );
    expect(await waitFor(() => groupGone(pgid), 300)).toBe(false);
    expect(
      (
        await request(t.url)
          .post(`/v1/sessions/${id}/tools/mcp__echo__get_secret`)
          .set(auth)
          .send({ args: {} })
          .expect(200)
      ).body.output,
    ).toBe('parent-secret');
    t.fake.assertDone();
  });
});

import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider, type RecordedRequest } from '../support/fake-provider.js';
import { createSession, eventually, history, ofType, runAndWait, runEvents } from '../support/run-helpers.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { startWebhookServer } from '../support/webhook-server.js';

/** A pre-analysis answer in the seed's shape. */
function analysis(
  steps: { id: string; description: string; dependencies?: string[]; success_criteria?: string }[],
  extra: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    intent: 'general',
    requires_planning: true,
    goal: { description: 'Summarise a.txt', success_criteria: ['a summary is given'] },
    execution_plan: { complexity: 'Medium', steps, required_tools: ['read'] },
    optimized_input: 'Summarise a.txt',
    ...extra,
  });
}

const formatName = (r: RecordedRequest): string | undefined =>
  (r.body.response_format as { json_schema?: { name?: string } } | undefined)?.json_schema?.name;
/** Accepts only a structured-output request for `name`, without tools. */
const structured = (name: string) => (r: RecordedRequest) => {
  expect(formatName(r)).toBe(name);
  expect(r.body.tools ?? []).toEqual([]);
};
const turn = (r: RecordedRequest) => {
  expect(r.body.response_format).toBeUndefined();
  expect((r.body.tools ?? []).length).toBeGreaterThan(0);
};
const lastUser = (r: RecordedRequest): string =>
  String([...r.body.messages].reverse().find((m) => m.role === 'user')?.content ?? '');

describe('planning and goal tracking over HTTP', () => {
  let fake: FakeProvider;
  let t: TestServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    t = await startTestServer({
      fake,
      files: {
        'a.txt': 'alpha\nbeta\n',
        'package.json': JSON.stringify({ name: 'demo', scripts: { test: 'node -e "0"' } }),
        'package-lock.json': '{}',
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('planningMode "enabled": planning_start/end, steps in dependency order with step and task events, planning -> executing', async () => {
    const id = await createSession(t, { planningMode: 'enabled' });
    fake.script(
      {
        text: analysis([
          { id: 's2', description: 'Summarise it', dependencies: ['s1'] },
          { id: 's1', description: 'Read a.txt', success_criteria: 'the content is known' },
        ]),
        usage: { prompt_tokens: 40, completion_tokens: 10 },
        expect: structured('pre_analysis'),
      },
      {
        toolCalls: [{ id: 'r1', name: 'read', arguments: { file_path: 'a.txt' } }],
        expect: (r) => {
          turn(r);
          expect(lastUser(r)).toContain('Execute plan step 2/2');
          expect(lastUser(r)).toContain('Read a.txt');
          expect(lastUser(r)).toContain('Success criteria: the content is known');
        },
      },
      { text: 'read it: alpha beta', expect: turn },
      { text: 'The file lists alpha and beta.', expect: (r) => expect(lastUser(r)).toContain('Execute plan step 1/2') },
    );
    const done = await runAndWait(t, id, 'summarise a.txt');
    fake.assertDone();
    expect(done.run.status).toBe('completed');
    expect(done.result.text).toBe('The file lists alpha and beta.');
    // The pre-analysis call's usage counts in the run's (the fake reports 15 for each turn).
    expect(done.result.totalTokens).toBe(50 + 15 * 3);
    const events = await runEvents(t, id, done.runId);
    const types = events
      .map((e) => e.type)
      .filter((type) => /^(planning_|step_|agent_end|run_status_changed)/.test(type));
    expect(types).toEqual([
      'run_status_changed',
      'run_status_changed',
      'planning_start',
      'planning_end',
      'run_status_changed',
      'step_start',
      'step_end',
      'step_start',
      'step_end',
      'run_status_changed',
      'agent_end',
    ]);
    expect(ofType(events, 'run_status_changed').map((e) => e.payload.to)).toEqual([
      'executing',
      'planning',
      'executing',
      'completed',
    ]);
    expect(ofType(events, 'planning_start')[0]?.payload).toEqual({ prompt: 'summarise a.txt' });
    const plan = ofType(events, 'planning_end')[0]?.payload as {
      plan: {
        steps: { id: string; status: string; content: string }[];
        goal: string;
        complexity: string;
        required_tools: string[];
      };
      estimated_steps: number;
    };
    expect(plan.estimated_steps).toBe(2);
    expect(plan.plan).toMatchObject({ goal: 'Summarise a.txt', complexity: 'Medium', required_tools: ['read'] });
    expect(plan.plan.steps.map((s) => [s.id, s.status, s.content])).toEqual([
      ['s2', 'pending', 'Summarise it'],
      ['s1', 'pending', 'Read a.txt'],
    ]);
    // s1 runs first (s2 depends on it); step numbers are the plan's positions.
    expect(ofType(events, 'step_start').map((e) => e.payload)).toEqual([
      { step_id: 's1', description: 'Read a.txt', step_number: 2, total_steps: 2 },
      { step_id: 's2', description: 'Summarise it', step_number: 1, total_steps: 2 },
    ]);
    expect(ofType(events, 'step_end').map((e) => [e.payload.step_id, e.payload.status])).toEqual([
      ['s1', 'completed'],
      ['s2', 'completed'],
    ]);
    const updates = ofType(events, 'task_updated').map((e) =>
      (e.payload.tasks as { id: string; status: string }[]).map((task) => `${task.id}:${task.status}`).join(' '),
    );
    expect(updates[0]).toBe('s2:pending s1:pending');
    expect(updates.at(-1)).toBe('s2:completed s1:completed');
    expect(updates).toContain('s2:pending s1:in_progress');
    expect(ofType(events, 'task_updated')[0]?.payload.session_id).toBe(id);
    // The step instructions are part of the transcript the session keeps.
    const messages = await history(t, id);
    expect(messages.filter((m) => m.role === 'user').map((m) => String(m.content).split('\n')[0])).toEqual([
      'summarise a.txt',
      'Execute plan step 2/2 of the plan for: Summarise a.txt',
      'Execute plan step 1/2 of the plan for: Summarise a.txt',
    ]);
  });

  it('a malformed plan is repaired with its problems; one that stays malformed leaves the run unplanned with a run_warning', async () => {
    const id = await createSession(t, { planningMode: 'enabled' });
    fake.script(
      { text: 'I think we should read the file first.', expect: structured('pre_analysis') },
      {
        text: '```json\n' + analysis([{ id: 'a', description: 'Answer', dependencies: ['a'] }]) + '\n```',
        expect: (r) => {
          expect(formatName(r)).toBe('pre_analysis');
          expect(r.body.messages.at(-2)).toMatchObject({
            role: 'assistant',
            content: 'I think we should read the file first.',
          });
          expect(lastUser(r)).toMatch(/not a valid JSON object .*no JSON object/);
        },
      },
      {
        text: analysis([{ id: 'a', description: 'Answer' }]),
        expect: (r) =>
          expect(lastUser(r)).toContain('execution_plan.steps.0.dependencies: "a" is not another step\'s id'),
      },
      { text: 'answered', expect: turn },
    );
    const repaired = await runAndWait(t, id, 'answer');
    fake.assertDone();
    const events = await runEvents(t, id, repaired.runId);
    expect(ofType(events, 'planning_end')).toHaveLength(1);
    expect(ofType(events, 'run_warning')).toHaveLength(0);
    expect(repaired.result.text).toBe('answered');

    fake.script({ text: 'no' }, { text: '{"intent": 1}' }, { text: '[]' }, { text: 'plain answer', expect: turn });
    const unplanned = await runAndWait(t, id, 'answer again');
    fake.assertDone();
    expect(unplanned.run.status).toBe('completed');
    const after = await runEvents(t, id, unplanned.runId);
    expect(ofType(after, 'planning_start')).toHaveLength(0);
    expect(ofType(after, 'run_warning')[0]?.payload).toMatchObject({
      source: 'planning',
      fallback: 'unplanned',
      message: expect.stringContaining('no valid pre_analysis after 3 calls'),
    });
    expect(ofType(after, 'run_status_changed').map((e) => e.payload.to)).toEqual([
      'executing',
      'planning',
      'executing',
      'completed',
    ]);
  });

  it('planningMode "auto": pre-analysis decides; without a valid answer the keyword detection picks the one-step plan', async () => {
    const id = await createSession(t, { planningMode: 'auto' });
    fake.script(
      {
        text: analysis([{ id: 'x', description: 'x' }], { requires_planning: false }),
        expect: structured('pre_analysis'),
      },
      { text: 'just an answer', expect: turn },
    );
    const simple = await runAndWait(t, id, 'what is 2+2?');
    fake.assertDone();
    expect(ofType(await runEvents(t, id, simple.runId), 'planning_start')).toHaveLength(0);

    fake.script(
      { text: 'x' },
      { text: 'x' },
      { text: 'x' },
      {
        text: 'refactored',
        expect: (r) =>
          expect(lastUser(r)).toContain('Execute plan step 1/1 of the plan for: refactor the parser step by step'),
      },
    );
    const keyword = await runAndWait(t, id, 'refactor the parser step by step');
    fake.assertDone();
    const events = await runEvents(t, id, keyword.runId);
    expect(ofType(events, 'run_warning')[0]?.payload).toMatchObject({
      source: 'planning',
      fallback: 'single_step_plan',
    });
    expect(
      (ofType(events, 'planning_end')[0]?.payload.plan as { steps: unknown[]; complexity: string }).complexity,
    ).toBe('Simple');
    expect(ofType(events, 'step_end').map((e) => e.payload.status)).toEqual(['completed']);
  });

  it('goalTracking without planning: goal_extracted, goal_progress and goal_achieved before agent_end', async () => {
    const id = await createSession(t, { goalTracking: true });
    fake.script(
      {
        text: JSON.stringify({ description: 'Greet the user', success_criteria: ['a greeting is given'] }),
        expect: structured('goal'),
      },
      { text: 'Hello!', expect: turn },
      {
        text: JSON.stringify({ achieved: true, progress: 1, remaining_criteria: [] }),
        expect: (r) => {
          structured('goal_achievement')(r);
          expect(lastUser(r)).toContain('Assistant result:\nHello!');
          expect(lastUser(r)).toContain('No verification report was recorded in this run.');
        },
      },
    );
    const done = await runAndWait(t, id, 'say hello');
    fake.assertDone();
    const events = await runEvents(t, id, done.runId);
    const goal = ofType(events, 'goal_extracted')[0]?.payload.goal as Record<string, unknown>;
    expect(goal).toMatchObject({
      description: 'Greet the user',
      success_criteria: ['a greeting is given'],
      progress: 0,
      achieved: false,
    });
    expect(typeof goal.created_at).toBe('number');
    expect(ofType(events, 'goal_progress')[0]?.payload).toEqual({
      goal: 'Greet the user',
      progress: 1,
      completed_steps: 1,
      total_steps: 1,
    });
    expect(ofType(events, 'goal_achieved')[0]?.payload).toMatchObject({ goal: 'Greet the user', total_steps: 1 });
    const types = events.map((e) => e.type);
    expect(types.indexOf('goal_achieved')).toBeLessThan(types.indexOf('agent_end'));
    expect(ofType(events, 'planning_start')).toHaveLength(0);
  });

  it('a goal whose criteria name verification is achieved only with a passing verification report in the run', async () => {
    const id = await createSession(t, { goalTracking: true });
    const goal = JSON.stringify({ description: 'Make the tests pass', success_criteria: ['npm test passes'] });
    const achieved = JSON.stringify({ achieved: true, progress: 1, remaining_criteria: [] });
    fake.script({ text: goal }, { text: 'Done, the tests pass now.' }, { text: achieved });
    const claimed = await runAndWait(t, id, 'fix the tests');
    fake.assertDone();
    const unverified = await runEvents(t, id, claimed.runId);
    expect(ofType(unverified, 'goal_achieved')).toHaveLength(0);
    expect(ofType(unverified, 'run_warning')[0]?.payload.message).toMatch(
      /no passing verification report \(verification status skipped\)/,
    );

    fake.script(
      { text: goal },
      { toolCalls: [{ id: 'v1', name: 'bash', arguments: { command: 'npm test' } }] },
      { text: 'Verified: npm test passes.' },
      { text: achieved, expect: (r) => expect(lastUser(r)).toMatch(/Verification passed/) },
    );
    const verified = await runAndWait(t, id, 'fix the tests');
    fake.assertDone();
    expect(verified.result).toMatchObject({ verificationStatus: 'passed', verificationReportCount: 1 });
    const events = await runEvents(t, id, verified.runId);
    expect(ofType(events, 'goal_achieved')[0]?.payload).toMatchObject({ goal: 'Make the tests pass', total_steps: 1 });
  });

  it('planned goal tracking reports progress per step; the goal of a failed step is never achieved', async () => {
    const id = await createSession(t, { planningMode: 'enabled', goalTracking: true, maxToolRounds: 1 });
    fake.script(
      {
        text: analysis([
          { id: 'one', description: 'First' },
          { id: 'two', description: 'Second', dependencies: ['one'] },
          { id: 'three', description: 'Third', dependencies: ['two'] },
        ]),
      },
      { text: 'first done' },
      { toolCalls: [{ id: 'l1', name: 'ls', arguments: {} }] },
      { toolCalls: [{ id: 'l2', name: 'ls', arguments: {} }] },
    );
    const done = await runAndWait(t, id, 'three things');
    fake.assertDone();
    expect(done.run.status).toBe('failed');
    expect(done.run.error?.code).toBe('MAX_TOOL_ROUNDS');
    const events = await runEvents(t, id, done.runId);
    expect(
      ofType(events, 'goal_progress').map((e) => [
        e.payload.completed_steps,
        e.payload.total_steps,
        e.payload.progress,
      ]),
    ).toEqual([[1, 3, 1 / 3]]);
    expect(ofType(events, 'step_end').map((e) => [e.payload.step_id, e.payload.status])).toEqual([
      ['one', 'completed'],
      ['two', 'failed'],
    ]);
    const last = ofType(events, 'task_updated').at(-1)?.payload.tasks as { id: string; status: string }[];
    expect(last.map((task) => task.status)).toEqual(['completed', 'failed', 'skipped']);
    expect(ofType(events, 'goal_achieved')).toHaveLength(0);
  });

  it('every planning, repair and goal call goes through the run LLM invoker: one budget check per provider request, usage recorded', async () => {
    const host = await startWebhookServer({ '/budget': () => ({ body: { decision: 'allow' } }) });
    try {
      const id = await createSession(t, {
        planningMode: 'enabled',
        goalTracking: true,
        budgetHost: { url: host.url('/budget') },
      });
      const before = fake.requests.length;
      fake.script(
        { text: 'not json' },
        { text: analysis([{ id: 'a', description: 'Do it' }]) },
        { text: 'done' },
        { text: JSON.stringify({ achieved: false, progress: 0.5, remaining_criteria: ['more'] }) },
      );
      await runAndWait(t, id, 'do it');
      fake.assertDone();
      const llmChecks = host.on('/budget').filter((call) => (call.body as { phase?: string }).phase === 'llm');
      expect(fake.requests.length - before).toBe(4);
      expect(llmChecks).toHaveLength(4);
    } finally {
      await host.close();
    }
    // The built-in guard records the planning call's usage: a 1,100-token budget is spent by it before the first turn.
    const id = await createSession(t, { planningMode: 'enabled', budget: { maxTokens: 1100 } });
    fake.script({
      text: analysis([{ id: 'a', description: 'Do it' }]),
      usage: { prompt_tokens: 1000, completion_tokens: 200 },
    });
    const denied = await runAndWait(t, id, 'do it');
    fake.assertDone();
    expect(denied.run.error?.code).toBe('BUDGET_EXHAUSTED');
  });

  it('cancelling during planning cancels the run and aborts the planning request', async () => {
    const id = await createSession(t, { planningMode: 'enabled' });
    const before = fake.requests.length;
    fake.script({ hang: true });
    const started = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'slow plan' }).expect(202);
    await fake.waitForRequests(before + 1);
    await request(t.url).post(`/v1/sessions/${id}/cancel`).send({}).expect(200);
    const status = async () =>
      (
        (await request(t.url).get(`/v1/sessions/${id}/runs/${started.body.runId}`).expect(200)).body as {
          run: { status: string };
        }
      ).run.status;
    await eventually(async () => (await status()) === 'cancelled', 'the run to be cancelled');
    expect(fake.requests.at(-1)?.abortedAtMs).toBeDefined();
  });

  it('a planned run resumed on another server continues the step its checkpoint was in, then the rest', async () => {
    const dataDir = tempDir('a3s-plan-');
    const root = t.root;
    const first = await startTestServer({ fake, dataDir, root });
    const id = 'planned-resume';
    await request(first.url)
      .post('/v1/sessions')
      .send({ sessionId: id, planningMode: 'enabled', autoSave: true })
      .expect(201);
    fake.script(
      {
        text: analysis([
          { id: 's1', description: 'Look' },
          { id: 's2', description: 'Read', dependencies: ['s1'] },
        ]),
      },
      { text: 'looked' },
      { toolCalls: [{ id: 'r1', name: 'read', arguments: { file_path: 'a.txt' } }] },
      { hang: true },
    );
    const before = fake.requests.length;
    const started = await request(first.url)
      .post(`/v1/sessions/${id}/runs`)
      .send({ input: 'look then read' })
      .expect(202);
    // The checkpoint after step s2's tool round is written before the hanging fourth request starts.
    await fake.waitForRequests(before + 4);
    await first.close();

    const second = await startTestServer({ fake, dataDir, root });
    try {
      fake.script({
        text: 'read: alpha beta',
        expect: (r) =>
          expect(r.body.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(['r1']),
      });
      const resumed = await request(second.url)
        .post(`/v1/sessions/${id}/runs/${started.body.runId}/resume`)
        .send({ wait: true })
        .expect(200);
      fake.assertDone();
      expect(resumed.body.result.text).toBe('read: alpha beta');
      const events = await runEvents(second, id, resumed.body.runId);
      expect(ofType(events, 'planning_start')).toHaveLength(0);
      expect(ofType(events, 'step_start')).toHaveLength(0);
      expect(ofType(events, 'step_end').map((e) => [e.payload.step_id, e.payload.status])).toEqual([
        ['s2', 'completed'],
      ]);
      expect(
        (ofType(events, 'task_updated')[0]?.payload.tasks as { status: string }[]).map((task) => task.status),
      ).toEqual(['completed', 'in_progress']);
    } finally {
      await second.close();
    }
  });
});

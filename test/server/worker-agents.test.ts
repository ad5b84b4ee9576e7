import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { client as acpClient } from '@agentclientprotocol/sdk';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import request from 'supertest';
import { WebSocket } from 'ws';
import { describe, expect, it } from 'vitest';
import { A3sClient } from '../../src/client/index.js';
import type { RecordedRequest } from '../support/fake-provider.js';
import { toolMessage, useTestServers } from '../support/run-helpers.js';
import type { TestServer } from '../support/test-server.js';

// Worker agents (the seed's workerAgents, registerWorkerAgent(s), sessionForWorker) through the front door, and
// the attacks on their bounds: no kind and no spec gets more than its session.

const HOST = 'token-workers-host-000001';
const USER = 'token-workers-user-000001';
const TOKENS = [
  { token: HOST, principal: 'ci', tenantId: 'team', scopes: ['sessions', 'host_direct'] },
  { token: USER, principal: 'alice', tenantId: 'team', scopes: ['sessions'] },
];
const auth = (token = USER) => ({ authorization: `Bearer ${token}` });

type Msg = { role: string; content?: unknown };
const messagesOf = (r: RecordedRequest) => r.body.messages as Msg[];
const runPrompt = (r: RecordedRequest) => String(messagesOf(r).findLast((m) => m.role === 'user')?.content ?? '');
const childStart = (prompt: string) => (r: RecordedRequest) =>
  runPrompt(r).startsWith(prompt) && messagesOf(r).at(-1)?.role === 'user';
const afterTool = (prompt: string) => (r: RecordedRequest) =>
  runPrompt(r).startsWith(prompt) && messagesOf(r).at(-1)?.role === 'tool';

/** The operator lets sessions do everything, so only the worker's bound can deny a call. */
const WIDE_OPEN = {
  allow: ['read', 'write', 'edit', 'patch', 'bash', 'task', 'parallel_task', 'ls', 'grep', 'glob'],
  defaultDecision: 'allow',
};

async function create(t: TestServer, body: Record<string, unknown>, token = USER) {
  return request(t.url).post('/v1/sessions').set(auth(token)).send(body);
}

async function run(t: TestServer, id: string, input: string) {
  const res = await request(t.url).post(`/v1/sessions/${id}/runs`).set(auth()).send({ input, wait: true }).expect(200);
  return res.body as { run: { status: string; result?: { text: string } } };
}

/** A parent run whose model delegates `prompt` to `agent`, whose model makes `calls`; answers when both end. */
function scriptDelegation(
  t: TestServer,
  parent: string,
  agent: string,
  prompt: string,
  calls: { id: string; name: string; arguments: Record<string, unknown> }[],
) {
  t.fake.script(
    {
      when: childStart(parent),
      toolCalls: [{ id: `task_${agent}`, name: 'task', arguments: { agent, description: 'work', prompt } }],
    },
    { when: childStart(prompt), toolCalls: calls },
    { when: afterTool(prompt), text: `${agent} done` },
    { when: afterTool(parent), text: 'parent done' },
  );
}

describe('worker agents: the seed kinds, registration and sessionForWorker', () => {
  const start = useTestServers();

  it("workerAgents compile with each kind's defaults; registerWorkerAgent(s) answer AgentDefinitions; agents lists kind and hidden", async () => {
    const t = await start({ config: { apiTokens: TOKENS } });
    const client = new A3sClient({ baseUrl: t.url, token: USER });
    const session = await client.session(t.root, {
      workerAgents: [
        { name: 'scout', description: 'Find things', kind: 'read_only' },
        { name: 'planner-cow', description: 'Plan', kind: 'planner' },
        { name: 'frontend-cow', description: 'Fix', kind: 'implementer', maxSteps: 24, prompt: 'Keep patches small.' },
        { name: 'verify-cow', description: 'Check', kind: 'verifier' },
        { name: 'review-cow', description: 'Review', kind: 'reviewer', hidden: true },
        { name: 'odd-job', description: 'Anything, asked first', kind: 'custom' },
      ],
    });
    const agents = await session.agents();
    const workers = agents.filter((a) => a.kind !== null);
    expect(workers.map((a) => [a.name, a.kind, a.readOnly, a.maxSteps, a.hidden, a.source])).toEqual([
      ['scout', 'read_only', true, 20, false, 'session'],
      ['planner-cow', 'planner', true, 30, false, 'session'],
      ['frontend-cow', 'implementer', false, 24, false, 'session'],
      ['verify-cow', 'verifier', false, 30, false, 'session'],
      ['review-cow', 'reviewer', true, 25, true, 'session'],
      ['odd-job', 'custom', false, 30, false, 'session'],
    ]);
    expect(agents.find((a) => a.name === 'explore')).toMatchObject({ kind: null, hidden: false });

    // The seed's node-sdk-confirmation smoke: registerWorkerAgent answers the compiled AgentDefinition.
    const defined = await session.registerWorkerAgent({
      name: 'test-reader',
      description: 'Test worker with deny-on-ask confirmation',
      kind: 'read_only',
      confirmationInheritance: 'deny_on_ask',
      maxSteps: 2,
    });
    expect(defined).toMatchObject({
      name: 'test-reader',
      kind: 'read_only',
      native: false,
      hidden: false,
      confirmationInheritance: 'deny_on_ask',
      maxSteps: 2,
      permissions: { defaultDecision: 'deny', deny: expect.arrayContaining(['bash', 'write', 'task']) },
    });
    expect(defined.prompt).toContain('explore');
    const many = await session.registerWorkerAgents([
      { name: 'w1', description: 'one', kind: 'implementer' },
      { name: 'w2', description: 'two', kind: 'custom', permissions: { allow: ['read'], defaultDecision: 'deny' } },
    ]);
    expect(many.map((d) => [d.name, d.maxSteps, d.permissions.defaultDecision, d.bounds.length])).toEqual([
      ['w1', 50, 'allow', 1],
      ['w2', 30, 'deny', 1],
    ]);
    expect(many[0]!.permissions.deny).toEqual(['task', 'parallel_task']);
    expect((await session.agents()).map((a) => a.name)).toEqual(expect.arrayContaining(['test-reader', 'w1', 'w2']));

    // Bad specs: 400 naming the field, and nothing of the batch is registered.
    const before = (await session.agents()).length;
    const bad: [unknown, string][] = [
      [{ name: 'explore', description: 'x', kind: 'read_only' }, 'body.workers.0.name'],
      [{ name: 'x1', description: 'x', kind: 'wizard' }, 'body.workers.0.kind'],
      [
        { name: 'x1', description: 'x', kind: 'custom', permissions: { allow: ['bash('] } },
        'body.workers.0.permissions',
      ],
      [
        { name: 'x1', description: 'x', kind: 'custom', permissions: { allow: ['*'], rules: [] } },
        'body.workers.0.permissions',
      ],
      [{ name: '../x', description: 'x', kind: 'custom' }, 'body.workers.0.name'],
      [{ name: 'x1', kind: 'custom' }, 'body.workers.0.description'],
    ];
    for (const [spec, field] of bad) {
      const res = await request(t.url)
        .post(`/v1/sessions/${session.sessionId}/agents/workers`)
        .set(auth())
        .send({ workers: [{ name: 'fine', description: 'ok', kind: 'read_only' }, spec].reverse() });
      expect({ spec, status: res.status }).toEqual({ spec, status: 400 });
      expect(res.text, JSON.stringify(spec)).toContain(field);
    }
    const twice = await request(t.url)
      .post(`/v1/sessions/${session.sessionId}/agents/workers`)
      .set(auth())
      .send({
        workers: [
          { name: 'same', description: 'a', kind: 'custom' },
          { name: 'same', description: 'b', kind: 'custom' },
        ],
      });
    expect(twice.status).toBe(400);
    expect(twice.text).toContain('body.workers.1.name');
    expect((await session.agents()).length).toBe(before);
    const atCreation = await create(t, { workerAgents: [{ name: 'general', description: 'x', kind: 'implementer' }] });
    expect(atCreation.status).toBe(400);
    expect(atCreation.text).toContain('body.workerAgents.0.name');
  });

  it('confirmationInheritance "auto_approve" on a worker needs host_direct, at creation and at registration', async () => {
    const t = await start({ config: { apiTokens: TOKENS } });
    const spec = {
      name: 'yolo',
      description: 'runs asks unasked',
      kind: 'implementer',
      confirmationInheritance: 'auto_approve',
    };
    const refused = await create(t, { workerAgents: [spec] });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      code: 'FORBIDDEN',
      details: { field: 'body.workerAgents.0.confirmationInheritance', scope: 'host_direct' },
    });
    const plain = await create(t, {});
    const id = plain.body.session.id as string;
    const route = await request(t.url)
      .post(`/v1/sessions/${id}/agents/workers`)
      .set(auth())
      .send({ workers: [spec] });
    expect(route.status).toBe(403);
    expect(route.body.error.details).toMatchObject({ field: 'body.workers.0.confirmationInheritance' });
    expect(
      ((await request(t.url).get(`/v1/sessions/${id}/agents`).set(auth())).body.agents as { name: string }[]).map(
        (a) => a.name,
      ),
    ).not.toContain('yolo');
    // A host_direct caller may choose it (as on POST .../tasks); the stricter modes need no scope.
    expect((await create(t, { workerAgents: [spec] }, HOST)).status).toBe(201);
    expect((await create(t, { workerAgents: [{ ...spec, confirmationInheritance: 'deny_on_ask' }] })).status).toBe(201);
  });
});

describe('hidden workers over ACP', () => {
  const start = useTestServers();

  it("session/load offers the session's visible workers as modes, never a hidden one", async () => {
    const t = await start();
    const res = await request(t.url)
      .post('/v1/sessions')
      .send({
        workerAgents: [
          { name: 'shown', description: 'visible worker', kind: 'read_only' },
          { name: 'unseen', description: 'hidden worker', kind: 'read_only', hidden: true },
        ],
      })
      .expect(201);
    const sessionId = res.body.session.id as string;
    const stream = createWebSocketStream(`${t.url.replace(/^http/, 'ws')}/acp`, { WebSocket });
    const modes = await acpClient({ name: 'test-editor' }).connectWith(stream, async (ctx) => {
      await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
      const loaded = await ctx.request('session/load', { sessionId, cwd: t.root, mcpServers: [] });
      return loaded?.modes?.availableModes.map((m) => m.id) ?? [];
    });
    expect(modes).toEqual(expect.arrayContaining(['general', 'explore', 'shown']));
    expect(modes).not.toContain('unseen');
  });
});

describe('worker bounds never widen the session (attacker-style)', () => {
  const start = useTestServers();
  const wide = () =>
    start({ files: { 'a.txt': 'alpha\n' }, config: { apiTokens: TOKENS, defaultPermissionPolicy: WIDE_OPEN } });

  it('a read_only worker whose own permissions allow write and bash still cannot write or run bash', async () => {
    const t = await wide();
    const res = await create(t, {
      workerAgents: [
        {
          name: 'sneaky',
          description: 'read-only, it says',
          kind: 'read_only',
          permissions: { allow: ['write', 'bash', 'edit'], defaultDecision: 'allow' },
        },
      ],
    });
    expect(res.status, res.text).toBe(201);
    scriptDelegation(t, 'delegate', 'sneaky', 'Try to write', [
      { id: 'w_read', name: 'read', arguments: { file_path: 'a.txt' } },
      { id: 'w_write', name: 'write', arguments: { file_path: 'pwned.txt', content: 'x' } },
      { id: 'w_bash', name: 'bash', arguments: { command: 'touch pwned-bash.txt' } },
      { id: 'w_edit', name: 'edit', arguments: { file_path: 'a.txt', old_string: 'alpha', new_string: 'owned' } },
    ]);
    expect((await run(t, res.body.session.id, 'delegate')).run.status).toBe('completed');
    t.fake.assertDone();
    expect(toolMessage(t, 'w_read')).toContain('alpha');
    for (const call of ['w_write', 'w_bash', 'w_edit']) expect(toolMessage(t, call), call).toContain('agent policy: ');
    expect(existsSync(join(t.root, 'pwned.txt'))).toBe(false);
    expect(existsSync(join(t.root, 'pwned-bash.txt'))).toBe(false);
    expect(readFileSync(join(t.root, 'a.txt'), 'utf8')).toBe('alpha\n');
    // The child's model was not even offered the tools its bound denies for every argument.
    const childTools = (
      t.fake.requests.find(childStart('Try to write'))!.body.tools as { function: { name: string } }[]
    ).map((tool) => tool.function.name);
    expect(childTools).toContain('read');
    expect(childTools).not.toContain('write');
    expect(childTools).not.toContain('bash');
  });

  it('planner and reviewer are read-only; a verifier cannot write or edit; an implementer cannot delegate again', async () => {
    const t = await wide();
    const res = await create(t, {
      workerAgents: [
        { name: 'p', description: 'plan', kind: 'planner' },
        { name: 'r', description: 'review', kind: 'reviewer' },
        {
          name: 'v',
          description: 'verify',
          kind: 'verifier',
          permissions: { allow: ['write'], defaultDecision: 'allow' },
        },
        { name: 'i', description: 'implement', kind: 'implementer' },
      ],
    });
    const id = res.body.session.id as string;
    const cases: [string, string, Record<string, unknown>][] = [
      ['p', 'write', { file_path: 'p.txt', content: 'x' }],
      ['r', 'bash', { command: 'touch r.txt' }],
      ['v', 'write', { file_path: 'v.txt', content: 'x' }],
      ['v', 'edit', { file_path: 'a.txt', old_string: 'alpha', new_string: 'v' }],
      ['i', 'task', { agent: 'explore', description: 'again', prompt: 'recurse' }],
    ];
    for (const [agent, tool, args] of cases) {
      const callId = `c_${agent}_${tool}`;
      scriptDelegation(t, `go ${callId}`, agent, `Do ${callId}`, [{ id: callId, name: tool, arguments: args }]);
      expect((await run(t, id, `go ${callId}`)).run.status).toBe('completed');
      expect(toolMessage(t, callId), callId).toContain('agent policy: ');
    }
    t.fake.assertDone();
    for (const file of ['p.txt', 'r.txt', 'v.txt']) expect(existsSync(join(t.root, file)), file).toBe(false);
    expect(readFileSync(join(t.root, 'a.txt'), 'utf8')).toBe('alpha\n');
  });

  it("a custom worker allowing everything gets no more than its session's policy; without permissions it asks (deny_on_ask: denied)", async () => {
    // The operator's policy (a sessions caller's own policy is bounded by it) denies write.
    const t = await start({
      files: { 'a.txt': 'alpha\n' },
      config: {
        apiTokens: TOKENS,
        defaultPermissionPolicy: { allow: ['read', 'task'], deny: ['write', 'bash'], defaultDecision: 'deny' },
      },
    });
    const res = await create(t, {
      permissionPolicy: { allow: ['write', 'bash', 'read', 'task'], defaultDecision: 'allow' },
      workerAgents: [
        {
          name: 'all',
          description: 'everything',
          kind: 'custom',
          permissions: { allow: ['write', 'bash', 'read'], defaultDecision: 'allow' },
        },
        { name: 'strict', description: 'asks first', kind: 'custom', confirmationInheritance: 'deny_on_ask' },
      ],
    });
    expect(res.status, res.text).toBe(201);
    const id = res.body.session.id as string;
    scriptDelegation(t, 'go all', 'all', 'Write it', [
      { id: 'all_write', name: 'write', arguments: { file_path: 'pwned.txt', content: 'x' } },
      { id: 'all_bash', name: 'bash', arguments: { command: 'touch pwned.txt' } },
      { id: 'all_read', name: 'read', arguments: { file_path: 'a.txt' } },
    ]);
    expect((await run(t, id, 'go all')).run.status).toBe('completed');
    expect(toolMessage(t, 'all_write')).toContain('denied');
    expect(toolMessage(t, 'all_bash')).toContain('denied');
    expect(toolMessage(t, 'all_read')).toContain('alpha');
    scriptDelegation(t, 'go strict', 'strict', 'Read it', [
      { id: 'strict_read', name: 'read', arguments: { file_path: 'a.txt' } },
    ]);
    expect((await run(t, id, 'go strict')).run.status).toBe('completed');
    expect(toolMessage(t, 'strict_read')).toContain('confirmationInheritance deny_on_ask');
    t.fake.assertDone();
    expect(existsSync(join(t.root, 'pwned.txt'))).toBe(false);
  });

  it("a delegated implementer keeps its parent worker's bound: the child cannot write what the parent may not", async () => {
    const t = await wide();
    const client = new A3sClient({ baseUrl: t.url, token: USER });
    // The session runs as a custom worker that may only read and delegate; its child is an implementer.
    const parent = await client.sessionForWorker(
      t.root,
      {
        name: 'lead',
        description: 'reads and delegates',
        kind: 'custom',
        permissions: { allow: ['read', 'task'], defaultDecision: 'deny' },
      },
      { workerAgents: [{ name: 'hands', description: 'implements', kind: 'implementer' }] },
    );
    scriptDelegation(t, 'lead it', 'hands', 'Hands write', [
      { id: 'hands_write', name: 'write', arguments: { file_path: 'pwned.txt', content: 'x' } },
      { id: 'hands_read', name: 'read', arguments: { file_path: 'a.txt' } },
    ]);
    expect((await run(t, parent.sessionId, 'lead it')).run.result?.text).toBe('parent done');
    expect(toolMessage(t, 'hands_write')).toContain('agent policy: ');
    expect(toolMessage(t, 'hands_read')).toContain('alpha');
    expect(existsSync(join(t.root, 'pwned.txt'))).toBe(false);
    t.fake.assertDone();
  });

  it("sessionForWorker: a read_only worker as the session's actor; hidden workers are delegated to, never advertised", async () => {
    const t = await wide();
    const client = new A3sClient({ baseUrl: t.url, token: USER });
    const session = await client.sessionForWorker(t.root, {
      name: 'top-scout',
      description: 'Look, never touch',
      kind: 'read_only',
      prompt: 'You are top-scout.',
    });
    expect(session.created.agent).toBe('top-scout');
    t.fake.script(
      {
        toolCalls: [
          { id: 'top_write', name: 'write', arguments: { file_path: 'pwned.txt', content: 'x' } },
          { id: 'top_read', name: 'read', arguments: { file_path: 'a.txt' } },
        ],
      },
      { text: 'looked' },
    );
    expect((await run(t, session.sessionId, 'look around')).run.result?.text).toBe('looked');
    expect(toolMessage(t, 'top_write')).toContain('agent policy: ');
    expect(toolMessage(t, 'top_read')).toContain('alpha');
    expect(existsSync(join(t.root, 'pwned.txt'))).toBe(false);
    const first = t.fake.requests.at(-2)!;
    expect(String(messagesOf(first)[0]!.content)).toContain('You are top-scout.');
    // The seed's async twins are the same calls.
    const twin = await client.sessionForWorkerAsync(t.root, {
      name: 'twin-scout',
      description: 'twin',
      kind: 'planner',
    });
    expect(twin.created.agent).toBe('twin-scout');
    const viaAgent = await client.sessionForAgentAsync(t.root, 'twin-scout', [
      { name: 'twin-scout', description: 'twin', kind: 'planner' },
    ]);
    expect(viaAgent.created.agent).toBe('twin-scout');

    // sessionForAgent(workspace, agent, workers): a hidden worker, delegated to by name.
    const parent = await client.sessionForAgent(t.root, 'general', [
      { name: 'ghost', description: 'hidden helper', kind: 'read_only', hidden: true },
    ]);
    expect((await parent.agents()).find((a) => a.name === 'ghost')).toMatchObject({ hidden: true });
    t.fake.script(
      {
        when: childStart('find ghost'),
        toolCalls: [{ id: 'bad_task', name: 'task', arguments: { agent: 'nobody', description: 'x', prompt: 'x' } }],
      },
      { when: afterTool('find ghost'), text: 'no such agent' },
    );
    await run(t, parent.sessionId, 'find ghost');
    expect(toolMessage(t, 'bad_task')).toContain('no agent named "nobody"');
    expect(toolMessage(t, 'bad_task')).not.toContain('ghost');
    scriptDelegation(t, 'use ghost', 'ghost', 'Ghost reads', [
      { id: 'ghost_read', name: 'read', arguments: { file_path: 'a.txt' } },
    ]);
    expect((await run(t, parent.sessionId, 'use ghost')).run.result?.text).toBe('parent done');
    expect(toolMessage(t, 'ghost_read')).toContain('alpha');
    t.fake.assertDone();
  });

  it('a resumed session keeps the workers of its options and the bound of the worker it runs as', async () => {
    const first = await wide();
    const created = await create(first, {
      sessionId: 'worker-resume',
      autoSave: true,
      agent: 'keeper',
      workerAgents: [
        { name: 'keeper', description: 'Keeps looking', kind: 'read_only', prompt: 'You are keeper.' },
        { name: 'fixer', description: 'Fixes', kind: 'implementer', hidden: true },
      ],
    });
    expect(created.status, created.text).toBe(201);
    first.fake.script({ text: 'first' });
    await run(first, 'worker-resume', 'hi');
    await first.close();
    const t = await start({
      dataDir: first.dataDir,
      root: first.root,
      config: { apiTokens: TOKENS, defaultPermissionPolicy: WIDE_OPEN },
    });
    const resumed = await create(t, { sessionId: 'worker-resume', resume: true });
    expect(resumed.status, resumed.text).toBe(201);
    expect(resumed.body.session.agent).toBe('keeper');
    const agents = (await request(t.url).get('/v1/sessions/worker-resume/agents').set(auth())).body.agents as {
      name: string;
      kind: string | null;
      hidden: boolean;
    }[];
    expect(agents.filter((a) => a.kind !== null)).toMatchObject([
      { name: 'keeper', kind: 'read_only', hidden: false },
      { name: 'fixer', kind: 'implementer', hidden: true },
    ]);
    t.fake.script(
      { toolCalls: [{ id: 'resumed_write', name: 'write', arguments: { file_path: 'pwned.txt', content: 'x' } }] },
      { text: 'ok' },
    );
    await run(t, 'worker-resume', 'again');
    expect(toolMessage(t, 'resumed_write')).toContain('agent policy: ');
    expect(existsSync(join(t.root, 'pwned.txt'))).toBe(false);
    expect(String(messagesOf(t.fake.requests.at(-2)!)[0]!.content)).toContain('You are keeper.');
    t.fake.assertDone();
  });

  it('an agent file with `kind` is a worker (the seed form): its kind bound holds; it cannot carry confirmationInheritance', async () => {
    const t = await start({
      files: {
        'a.txt': 'alpha\n',
        'agents/cow.yaml':
          'name: cow\ndescription: file worker\nkind: read_only\nhidden: true\npermissions:\n  allow: [read, write]\n',
        'bad/yolo.yaml': 'name: yolo\ndescription: x\nkind: implementer\nconfirmation_inheritance: auto_approve\n',
        'bad2/h.yaml': 'name: h\ndescription: x\nhidden: true\n',
      },
      config: { apiTokens: TOKENS, defaultPermissionPolicy: WIDE_OPEN },
    });
    const res = await create(t, { agentDirs: ['agents'] });
    expect(res.status, res.text).toBe(201);
    const id = res.body.session.id as string;
    const agents = (await request(t.url).get(`/v1/sessions/${id}/agents`).set(auth())).body.agents as Record<
      string,
      unknown
    >[];
    expect(agents.find((a) => a.name === 'cow')).toMatchObject({
      kind: 'read_only',
      readOnly: true,
      hidden: true,
      maxSteps: 20,
    });
    for (const [dir, field] of [
      ['bad', 'confirmation_inheritance'],
      ['bad2', 'hidden'],
    ]) {
      const refused = await request(t.url).post(`/v1/sessions/${id}/agents/dirs`).set(auth()).send({ path: dir });
      expect({ dir, status: refused.status }).toEqual({ dir, status: 400 });
      expect(refused.text, dir).toContain(field);
    }
    scriptDelegation(t, 'go cow', 'cow', 'Cow writes', [
      { id: 'cow_write', name: 'write', arguments: { file_path: 'pwned.txt', content: 'x' } },
    ]);
    await run(t, id, 'go cow');
    expect(toolMessage(t, 'cow_write')).toContain('agent policy: ');
    expect(existsSync(join(t.root, 'pwned.txt'))).toBe(false);
    t.fake.assertDone();
  });
});

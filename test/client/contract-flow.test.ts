// The seed's contract flow (API.md "Seed contract in HTTP form" and the Node SDK calls of
// seeds/api-contract-zh.txt) through the typed client, against a real server and the strict fake provider.
// The steps share one server and one session ("docs-contract") and run in order, like the seed's smoke script.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  A3sClient,
  SessionBusyError,
  agentEventTypesV1,
  eventEnvelopeV1Version,
  type AgentEvent,
  type Session,
} from '../../src/client/index.js';
import { ECHO_SERVER } from '../mcp/mcp-test-helpers.js';
import {
  SEED_PROGRAM_BODY,
  SEED_PROGRAM_FILES,
  SEED_PROGRAM_RESULT,
  SEED_PROGRAM_TOOL_ORDER,
} from '../program/fixtures/seed-program-example.js';
import { SEED_EXAMPLE_FILES, SEED_EXAMPLE_PLUS, seedSessionOptions } from '../server/fixtures/seed-session-options.js';
import type { RecordedRequest } from '../support/fake-provider.js';
import { eventually } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { CONTRACT_FILES, SEED_VERIFICATION, SEED_TOOL_NAMES } from './fixtures/contract-flow-fixtures.js';

const HOST = 'token-contract-flow-host-0001';

type Msg = { role: string; content?: unknown; tool_call_id?: string };
const messagesOf = (r: RecordedRequest): Msg[] => r.body.messages as Msg[];
/** The last user message of a provider request (the prompt of the run it belongs to). */
const promptOf = (r: RecordedRequest): string =>
  String(messagesOf(r).findLast((m) => m.role === 'user')?.content ?? '');
/** The text of whatever a direct-tool helper answered: a string, or a ToolResult's output. */
const outputOf = (value: unknown): string =>
  typeof value === 'string' ? value : String((value as { output?: unknown }).output);
const asRecord = (value: unknown): Record<string, unknown> => value as Record<string, unknown>;

/** Read a stream with `.next()` until it is done, exactly as the seed's smoke script does. */
async function drain(stream: { next(): Promise<IteratorResult<AgentEvent, undefined>> }): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  while (true) {
    const { value: event, done } = await stream.next();
    if (done) return events;
    if (!event) continue;
    events.push(event);
    if (events.length > 10_000) throw new Error('stream did not end');
  }
}

describe("the seed's contract flow through the typed client", () => {
  let t: TestServer;
  let client: A3sClient;
  let session: Session;

  beforeAll(async () => {
    t = await startTestServer({
      files: { ...SEED_PROGRAM_FILES, ...SEED_EXAMPLE_FILES, ...CONTRACT_FILES },
      config: {
        // The stdio MCP fixture lives in the repository, outside the workspace: host-direct calls run
        // unsandboxed here, as in test/server/mcp.test.ts (test/server/sandbox-mcp.test.ts covers the sandbox).
        sandbox: { hostDirect: 'none' },
        // The seed's example names principal "principal-example": the token's own (only admins may name another).
        apiTokens: [
          { token: HOST, principal: 'principal-example', tenantId: 'default', scopes: ['sessions', 'host_direct'] },
        ],
      },
    });
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=Docs', '-c', 'user.email=docs@example.invalid', ...args], { cwd: t.root });
    git('init', '-q');
    git('add', '.');
    git('commit', '-q', '-m', 'docs contract workspace');
    client = new A3sClient({
      baseUrl: t.url,
      token: HOST,
      WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('creates the session with the full SessionOptions example; the labels are plain properties', async () => {
    // With the labels and prompt slots of the "plus" part (its tenantId "default" is the token's tenant);
    // goalTracking (a provider call of its own per run), agent, queue and policy are left to their own steps.
    const {
      agent: _agent,
      permissionPolicy: _policy,
      queueConfig: _queue,
      goalTracking: _goals,
      ...plus
    } = SEED_EXAMPLE_PLUS;
    session = await client.session(t.root, { ...seedSessionOptions(t.root), ...plus });
    expect(session.sessionId).toBe('docs-contract');
    // The seed: workspace is the canonical path.
    expect(session.workspace).toBe(t.root);
    expect(session.tenantId).toBe('default');
    expect(session.correlationId).toBe('trace-example');
    expect(session.agentTemplateId).toBe('agent-template-example');
    expect(session.principal).toBe('principal-example');
    // The seed: a plain session has no queue; the example's memoryStore gives it memory.
    expect(session.created).toMatchObject({
      id: 'docs-contract',
      initWarning: null,
      hasMemory: true,
      hasQueue: false,
      sessionStore: 'file',
      autoSave: true,
    });
    expect(await session.hasQueue()).toBe(false);
    expect((await session.skillNames()).sort()).toEqual(['release-notes', 'strict-release-review']);
    expect(await session.history()).toEqual([]);
    // Nothing runs: cancel answers false.
    expect(await session.cancel()).toBe(false);
  });

  it('send() returns the AgentResult fields on the result itself, and AGENTS.md reaches the provider', async () => {
    t.fake.script({
      text: 'A short answer.',
      usage: { prompt_tokens: 21, completion_tokens: 4 },
      expect: (r) => expect(String(messagesOf(r)[0]?.content)).toContain('docs-contract-agents-md-token'),
    });
    const result = await session.send('Return a short answer');
    expect(result).toMatchObject({
      text: 'A short answer.',
      toolCallsCount: 0,
      promptTokens: 21,
      completionTokens: 4,
      totalTokens: 25,
      verificationStatus: 'skipped',
      pendingVerificationCount: 0,
      failedVerificationCount: 0,
      verificationReportCount: 0,
      verificationSummaryJson: null,
      verificationSummaryText: null,
    });
    expect(t.fake.requests.at(-1)?.body.model).toBe('test-model');
    expect((await session.history()).map((m) => [m.role, m.content])).toEqual([
      ['user', 'Return a short answer'],
      ['assistant', 'A short answer.'],
    ]);
    t.fake.assertDone();
  });

  it('stream() yields envelope-v1 events through .next() up to agent_end, then null; the next send() is admitted at once', async () => {
    t.fake.script({ text: 'Streaming one sentence now.', chunks: 3 });
    const stream = await session.stream('Stream one sentence');
    const events = await drain(stream);
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('agent_start');
    expect(types.at(-1)).toBe('agent_end');
    // The seed's helpers: 52 v1 types; the run's core types are among them.
    expect(eventEnvelopeV1Version()).toBe(1);
    expect(agentEventTypesV1()).toHaveLength(52);
    expect(agentEventTypesV1()).toEqual(
      expect.arrayContaining(['agent_start', 'turn_start', 'text_delta', 'turn_end', 'agent_end']),
    );
    for (const event of events) {
      expect(event.version).toBe(eventEnvelopeV1Version());
      expect(event.metadata.session_id).toBe('docs-contract');
      expect(JSON.parse(event.payloadJson)).toEqual(event.payload);
      expect(JSON.parse(event.metadataJson)).toEqual(event.metadata);
    }
    const sequences = events.map((e) => e.metadata.session_sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(sequences.length);
    expect(events[0]?.prompt).toBe('Stream one sentence');
    const deltas = events.filter((e) => e.type === 'text_delta');
    expect(deltas).toHaveLength(3);
    expect(deltas.map((e) => e.text).join('')).toBe('Streaming one sentence now.');
    const end = events.at(-1);
    expect(end?.text).toBe('Streaming one sentence now.');
    expect(end?.totalTokens).toBe(15);
    expect(end?.verificationSummaryText).toBeUndefined();
    // The stream ended: asking again still answers done.
    expect(await stream.next()).toEqual({ done: true, value: undefined });

    // The seed's check: a send() right after the loop is admitted (the single-flight lease was released).
    // A refusal is recorded and checked last, after waiting for the lease, so the rest of the flow still runs.
    t.fake.script({ text: 'right after' });
    let busyRightAfter: unknown;
    const after = await session.send('And now?').catch(async (error: unknown) => {
      if (!(error instanceof SessionBusyError)) throw error;
      busyRightAfter = error;
      await eventually(async () => !(await session.info()).busy, 'the streamed run to release the session');
      return session.send('And now?');
    });
    expect(after.text).toBe('right after');
    expect(await session.history()).toHaveLength(6);
    t.fake.assertDone();
    expect(
      busyRightAfter,
      'send() right after the stream ended was refused: the stream ended before the run released the session',
    ).toBeUndefined();
  });

  it('a side question sends the given history and leaves the transcript as it was', async () => {
    const snapshot = await session.history();
    t.fake.script({
      text: 'It is the docs contract test.',
      expect: (r) => {
        const contents = messagesOf(r)
          .filter((m) => m.role !== 'system')
          .map((m) => m.content);
        expect(contents).toEqual([...snapshot.map((m) => m.content), 'What is this test?']);
      },
    });
    const side = await session.send('What is this test?', snapshot);
    expect(side.text).toBe('It is the docs contract test.');
    expect((await session.history()).length).toBe(snapshot.length);
    t.fake.assertDone();
  });

  it('runs: runs(), runSnapshot, runEvents, currentRun, cancelRun of an ended run, traceEvents', async () => {
    const runs = await session.runs();
    expect(runs.map((r) => r.input)).toEqual([
      'Return a short answer',
      'Stream one sentence',
      'And now?',
      'What is this test?',
    ]);
    const latest = runs.at(-1)!;
    expect(latest).toMatchObject({ sessionId: 'docs-contract', status: 'completed', sideQuestion: true });
    expect(await session.runSnapshot(latest.runId)).toMatchObject({
      runId: latest.runId,
      status: 'completed',
      result: { text: 'It is the docs contract test.' },
    });
    const events = await session.runEvents(latest.runId);
    expect(events[0]?.type).toBe('agent_start');
    expect(events.at(-1)?.type).toBe('agent_end');
    expect(events.every((e) => e.metadata.run_id === latest.runId)).toBe(true);
    // Idle: no current run, and cancelling an ended run answers false.
    expect(await session.currentRun()).toBeNull();
    expect(await session.cancelRun(latest.runId)).toBe(false);
    const trace = await session.traceEvents({ after: 0, limit: 1000 });
    expect(trace.filter((e) => e.type === 'agent_end')).toHaveLength(4);
    const sequences = trace.map((e) => e.metadata.session_sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
  });

  it('direct tools: readFile, glob (string[]), grep, ls, bash, tool(name, args), git, search_skills, toolNames, toolDefinitions, registerAgentDir', async () => {
    // readFile, grep and bash resolve to the output string, as the seed's do.
    expect(await session.readFile('README.md')).toContain('Set planningMode to "disabled"');
    expect([...(await session.glob('src/*.rs'))].sort()).toEqual(['src/lib.rs', 'src/main.rs']);
    expect(await session.glob('nothing/*.none')).toEqual([]);
    expect(await session.grep('PermissionPolicy')).toContain('docs/policy.md');
    expect(outputOf(await session.ls())).toContain('README.md');
    expect(await session.bash('printf docs-bash')).toBe('docs-bash');

    const read = await session.tool('read', { file_path: 'README.md' });
    expect(read).toMatchObject({ name: 'read', exitCode: 0 });
    expect(read.output).toContain('planningMode');

    const status = await session.git('status');
    expect(status).toMatchObject({ name: 'git', exitCode: 0, metadata: { is_dirty: false } });
    expect(status.output).toContain(`Workspace: ${t.root}`);
    expect(await session.git('diff')).toMatchObject({ exitCode: 0, output: 'No changes.' });
    expect(outputOf(await session.git('log', { limit: 5 }))).toContain('docs contract workspace');
    // The seed's positional form: maxCount is the 8th argument.
    expect(
      outputOf(await session.git('log', undefined, undefined, undefined, undefined, undefined, undefined, 5)),
    ).toContain('docs contract workspace');

    const skills = await session.tool('search_skills', { query: 'release blockers', limit: 5 });
    expect(skills).toMatchObject({ name: 'search_skills', exitCode: 0 });
    expect(skills.output).toContain('strict-release-review');

    const names = await session.toolNames();
    for (const name of SEED_TOOL_NAMES) expect(names).toContain(name);
    const definitions = await session.toolDefinitions();
    const grep = definitions.find((d) => d.name === 'grep');
    expect(grep).toMatchObject({ name: 'grep', parameters: { type: 'object' } });
    expect(typeof grep?.description).toBe('string');

    const agents = await session.registerAgentDir('agents');
    expect(agents.registered).toBe(1);
    expect((await session.agents()).map((a) => a.name)).toContain('docs-reviewer');
  });

  it("program(): the seed's full example, exit code 0, script_result and tool calls in the seed's order", async () => {
    const result = await session.program(SEED_PROGRAM_BODY);
    expect(result.exitCode, result.output).toBe(0);
    const metadata = asRecord(result.metadata);
    expect(metadata.script_result).toEqual(SEED_PROGRAM_RESULT);
    const calls = asRecord(metadata.program).tool_calls as { tool_name: string }[];
    expect(calls.map((c) => c.tool_name)).toEqual(SEED_PROGRAM_TOOL_ORDER);
  });

  it('verification: verifyCommands with the API.md body, reports, summary, summary text and presets', async () => {
    // The seed's call: verifyCommands(subject, commands).
    const report = await session.verifyCommands(SEED_VERIFICATION.subject, SEED_VERIFICATION.commands);
    expect(report).toMatchObject({
      schema: 'a3s.verification_report.v1',
      subject: 'docs smoke',
      status: 'passed',
      session_id: 'docs-contract',
    });
    expect(report.checks).toEqual([
      expect.objectContaining({ id: 'echo', status: 'passed', exit_code: 0, output_tail: 'verify' }),
    ]);
    expect((await session.verificationReports()).map((r) => r.subject)).toEqual(['docs smoke']);
    expect(await session.verificationSummary()).toMatchObject({
      status: 'passed',
      report_count: 1,
      required_check_count: 1,
      failed_check_count: 0,
    });
    expect(await session.verificationSummaryText()).toBe('Verification passed: 1 report, 1 required check.');
    const presets = await session.verificationPresets();
    expect(presets.map((p) => p.id)).toEqual(['rust-default']);
  });

  it('memory: rememberSuccess/Failure, memoryRecent, recallSimilar, recallByTags, memoryStats', async () => {
    const before = await session.memoryStats();
    const success = await session.rememberSuccess('docs memory success', ['grep'], 'remembered');
    expect(success).toMatchObject({
      content: 'Success: docs memory success\nTools: grep\nResult: remembered',
      tags: ['success', 'pattern'],
    });
    const failure = await session.rememberFailure('docs memory failure', 'expected failure', ['bash']);
    expect(failure).toMatchObject({
      content: 'Failure: docs memory failure\nError: expected failure\nAttempted tools: bash',
      tags: ['failure', 'avoid'],
    });
    // Newest first (the runs before stored memories of their own, older than these two).
    expect((await session.memoryRecent(10)).slice(0, 2).map((i) => i.id)).toEqual([failure.id, success.id]);
    expect(await session.memoryRecent(1)).toHaveLength(1);
    const similar = await session.recallSimilar('docs memory', 5);
    expect(similar.map((i) => i.id).sort()).toEqual([failure.id, success.id].sort());
    expect(await session.recallSimilar('nothing like this at all', 5)).toEqual([]);
    expect((await session.recallByTags(['avoid'], 10)).map((i) => i.id)).toEqual([failure.id]);
    expect(await session.recallByTags(['no-such-tag'], 10)).toEqual([]);
    const after = await session.memoryStats();
    expect(after.longTermCount).toBe(before.longTermCount + 2);
    expect(after).toEqual({
      longTermCount: expect.any(Number),
      shortTermCount: expect.any(Number),
      workingCount: expect.any(Number),
    });
  });

  it('skills: addSkill, skillNames, removeSkill', async () => {
    const added = await session.addSkill({
      name: 'docs-lint',
      kind: 'instruction',
      description: 'Lint the docs.',
      content: 'Run markdownlint on docs/.',
    });
    expect(added).toMatchObject({ name: 'docs-lint', kind: 'instruction', source: 'inline' });
    expect((await session.skillNames()).sort()).toEqual(['docs-lint', 'release-notes', 'strict-release-review']);
    const found = await session.tool('search_skills', { query: 'lint docs', limit: 5 });
    expect(found.output).toContain('docs-lint');
    expect(await session.removeSkill('docs-lint')).toBe(true);
    expect(await session.skillNames()).not.toContain('docs-lint');
    expect(await session.removeSkill('docs-lint')).toBe(false);
  });

  it('tasks: task() with a built-in agent and tasks() in parallel return the ToolResults of task and parallel_task', async () => {
    t.fake.script({ text: 'delegated ok', expect: (r) => expect(promptOf(r)).toContain('Return a short response.') });
    const one = await session.task({
      agent: 'general',
      description: 'docs delegated check',
      prompt: 'Return a short response.',
      maxSteps: 1,
    });
    expect(one).toMatchObject({
      name: 'task',
      output: 'delegated ok',
      exitCode: 0,
      metadata: { agent: 'general', success: true },
    });
    t.fake.script(
      { when: (r) => promptOf(r).startsWith('Return one response.'), text: 'one' },
      { when: (r) => promptOf(r).startsWith('Return another response.'), text: 'two' },
    );
    const many = await session.tasks({
      tasks: [
        { agent: 'general', description: 'one', prompt: 'Return one response.', maxSteps: 1 },
        { agent: 'general', description: 'two', prompt: 'Return another response.', maxSteps: 1 },
      ],
    });
    expect(many).toMatchObject({ name: 'parallel_task', exitCode: 0, metadata: { succeeded: 2, total: 2 } });
    expect(many.output).toContain('one');
    expect(many.output).toContain('two');
    const snapshots = await session.subagentTasks();
    expect(snapshots).toHaveLength(3);
    expect(snapshots.every((task) => task.status === 'completed')).toBe(true);
    t.fake.assertDone();
  });

  it('hooks: a JS callback blocks one tool call; its tool_end shows it blocked, the other call runs; unregisterHook answers a boolean', async () => {
    const seen: unknown[] = [];
    await session.registerHook(
      'docs-blocker',
      'pre_tool_use',
      { tool: 'bash' },
      { priority: 1, timeoutMs: 5000 },
      (payload, event) => {
        seen.push({ payload, event });
        return { action: 'block', reason: 'no shells in the docs check' };
      },
    );
    expect(await session.hookCount()).toBe(1);
    t.fake.script(
      {
        toolCalls: [
          { id: 'hb', name: 'bash', arguments: { command: 'printf should-not-run' } },
          { id: 'hr', name: 'read', arguments: { file_path: 'README.md' } },
        ],
      },
      {
        text: 'checked',
        expect: (r) =>
          expect(String(messagesOf(r).find((m) => m.tool_call_id === 'hb')?.content)).toContain(
            'no shells in the docs check',
          ),
      },
    );
    const events = await drain(await session.stream('Run the shell'));
    const ends = events.filter((e) => e.type === 'tool_end');
    expect(ends.map((e) => [e.toolId, e.toolName, e.exitCode])).toEqual([
      ['hb', 'bash', 1],
      ['hr', 'read', 0],
    ]);
    expect(ends[0]?.toolOutput).toContain('blocked by hook docs-blocker: no shells in the docs check');
    expect(ends[0]?.toolOutput).not.toContain('should-not-run');
    expect(events.find((e) => e.type === 'hook_blocked')?.payload).toMatchObject({
      tool_id: 'hb',
      hook_id: 'docs-blocker',
    });
    expect(events.at(-1)?.text).toBe('checked');
    // The callback saw the blocked call (and only that one: the matcher names bash).
    expect(seen).toEqual([
      {
        event: 'pre_tool_use',
        payload: expect.objectContaining({
          session_id: 'docs-contract',
          tool: 'bash',
          args: { command: 'printf should-not-run' },
          hook_id: 'docs-blocker',
        }),
      },
    ]);
    expect(await session.unregisterHook('docs-blocker')).toBe(true);
    expect(await session.unregisterHook('docs-blocker')).toBe(false);
    expect(await session.hookCount()).toBe(0);
    t.fake.assertDone();
  });

  it('commands: registerCommand with a JS handler; a run of "/name args" returns its text', async () => {
    await session.registerCommand('docs_status', 'Return docs command status', (args, ctx) => {
      return `status args=${args}; session=${ctx.sessionId}; workspace=${ctx.workspace}`;
    });
    const listed = await session.listCommands();
    expect(listed.find((c) => c.name === 'docs_status')).toMatchObject({
      description: 'Return docs command status',
      kind: 'websocket',
      source: 'session',
    });
    const result = await session.send('/docs_status check');
    expect(result.text).toBe(`status args=check; session=docs-contract; workspace=${t.root}`);
    t.fake.assertDone();
  });

  it('queue: hasQueue, setLaneHandler external, pendingExternalTasks, completeExternalTask, queueStats, queueMetrics, deadLetters', async () => {
    const queued = await client.session(t.root, { queueConfig: { enableDlq: true, enableMetrics: true } });
    try {
      expect(await queued.hasQueue()).toBe(true);
      await queued.setLaneHandler('execute', { mode: 'external', timeoutMs: 1000 });
      expect(await queued.pendingExternalTasks()).toEqual([]);
      expect(await queued.completeExternalTask('missing', { success: true, result: { ok: true } })).toBe(false);
      const stats = await queued.queueStats();
      expect(stats).toMatchObject({ totalPending: 0, totalActive: 0 });
      expect(stats.lanes.map((l) => l.lane)).toEqual(['control', 'query', 'execute', 'generate']);
      expect(stats.lanes.find((l) => l.lane === 'execute')).toMatchObject({ handlerMode: 'external' });
      // enableMetrics: the metrics are kept (per lane); enableDlq: nothing dead-lettered yet.
      const metrics = await queued.queueMetrics();
      expect(metrics).not.toBeNull();
      expect(Object.keys(metrics?.counters ?? {})).toEqual(expect.arrayContaining(['execute']));
      expect(await queued.deadLetters()).toEqual([]);

      // The external lane for real: the model's bash call waits for the host, which completes it.
      await queued.setLaneHandler('execute', { mode: 'external', timeoutMs: 30000 });
      t.fake.script(
        { toolCalls: [{ id: 'q1', name: 'bash', arguments: { command: 'deploy docs' } }] },
        {
          text: 'deployed',
          expect: (r) => expect(messagesOf(r).find((m) => m.tool_call_id === 'q1')?.content).toBe('host deployed'),
        },
      );
      const running = queued.send('deploy the docs');
      let pending: Awaited<ReturnType<Session['pendingExternalTasks']>> = [];
      await eventually(
        async () => (pending = await queued.pendingExternalTasks()).length === 1,
        'one pending external task',
      );
      expect(pending[0]).toMatchObject({ command_type: 'bash', payload: { command: 'deploy docs' } });
      expect(await queued.completeExternalTask(pending[0]!.task_id, { success: true, result: 'host deployed' })).toBe(
        true,
      );
      expect((await running).text).toBe('deployed');
      expect(await queued.pendingExternalTasks()).toEqual([]);
      t.fake.assertDone();
    } finally {
      await queued.close();
    }
  });

  it('MCP: addMcp with the stdio echo server, mcps(), its tools, removeMcp', async () => {
    const count = await session.addMcp({
      name: 'echo',
      transport: { type: 'stdio', command: process.execPath, args: [ECHO_SERVER, 'example-value'] },
      timeoutMs: 30000,
    });
    // The seed: addMcp answers the number of tools the server registered.
    expect(count).toBeTypeOf('number');
    expect(count).toBeGreaterThan(0);
    expect(await session.mcps()).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'echo', connected: true, toolCount: count })]),
    );
    const mcpTools = (await session.toolNames()).filter((name) => name.startsWith('mcp__echo__'));
    expect(mcpTools).toEqual(expect.arrayContaining(['mcp__echo__echo', 'mcp__echo__get_secret']));
    expect(mcpTools).toHaveLength(count as number);
    expect(await session.tool('mcp__echo__echo', { message: 'docs mcp ok' })).toMatchObject({
      name: 'mcp__echo__echo',
      output: 'docs mcp ok',
      exitCode: 0,
    });
    expect((await session.tool('mcp__echo__get_secret', {})).output).toBe('example-value');
    expect(await session.removeMcp('echo')).toBe(true);
    expect((await session.mcps()).map((s) => s.name)).not.toContain('echo');
    expect(await session.removeMcp('echo')).toBe(false);
    expect((await session.toolNames()).filter((name) => name.startsWith('mcp__echo__'))).toEqual([]);
  });

  it('save, close, listSessions/closeSession answers, then resumeSession brings the transcript back', async () => {
    const before = await session.history();
    expect(before.length).toBeGreaterThanOrEqual(8);
    const memories = (await session.memoryStats()).longTermCount;
    expect(await session.save()).toBeGreaterThan(0);
    // The seed's agent.listSessions() answers ids.
    expect(await client.listSessions()).toContain('docs-contract');
    expect(await session.close()).toBe(true);
    // Already closed: the seed's boolean answer.
    expect(await client.closeSession('docs-contract')).toBe(false);

    const resumed = await client.resumeSession('docs-contract');
    expect(resumed.sessionId).toBe('docs-contract');
    expect(resumed.resumed).toBe(true);
    expect(resumed.workspace).toBe(t.root);
    expect(resumed.correlationId).toBe('trace-example');
    expect(await resumed.history()).toEqual(before);
    // The resumed session runs: the verification report and memory came back with it.
    expect(await resumed.verificationSummaryText()).toBe('Verification passed: 1 report, 1 required check.');
    expect((await resumed.memoryStats()).longTermCount).toBe(memories);
    expect(await client.closeSession('docs-contract')).toBe(true);
    expect(await client.closeSession('no-such-session')).toBe(false);
    t.fake.assertDone();
  });

  it('sessionForAgent with the built-in explore agent: its prompt and its read-only tool set reach the provider', async () => {
    // The seed's call: sessionForAgent(workspace, 'explore', [], options).
    const explore = await client.sessionForAgent(t.root, 'explore', [], {});
    expect(explore.sessionId).not.toBe('docs-contract');
    t.fake.script({
      text: 'explored',
      expect: (r) => {
        expect(String(messagesOf(r)[0]?.content)).toContain('You are the explore agent');
        const offered = (r.body.tools ?? []).map((x) => String(asRecord(x.function).name));
        expect(offered).toContain('read');
        expect(offered).not.toContain('write');
      },
    });
    expect((await explore.send('Look around')).text).toBe('explored');
    expect(await client.closeSession(explore.sessionId)).toBe(true);
    t.fake.assertDone();
  });
});

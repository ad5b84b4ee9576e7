// The seed's Session surface of issue 30 through the typed client, against a real server on 127.0.0.1: string
// tool helpers (and ToolError for a failed result), the seed's MCP names, isClosed/initWarning/hasMemory,
// cancelConfirmations, pendingSubagentTasks/cancelSubagentTask, runEventPage's seed fields, the memory tiers
// with memory_cleared, and the send/stream aliases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  A3sClient,
  ForbiddenError,
  MemoryNotConfiguredError,
  NotFoundError,
  ToolError,
  ValidationError,
} from '../../src/client/index.js';
import type { RecordedRequest } from '../support/fake-provider.js';
import { ECHO_SERVER, echoServerConfig } from '../mcp/mcp-test-helpers.js';
import { eventually } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const HOST = 'token-client-seed-surface-01';
const SESSIONS_ONLY = 'token-client-seed-surface-02';

type Msg = { role: string; content?: unknown };
const lastUser = (r: RecordedRequest) =>
  String((r.body.messages as Msg[]).findLast((m) => m.role === 'user')?.content ?? '');

describe("the seed's Session surface through the client", () => {
  let t: TestServer;
  let client: A3sClient;

  beforeAll(async () => {
    t = await startTestServer({
      files: { 'a.txt': 'alpha\nbeta\n' },
      config: {
        // The stdio MCP fixture lives outside the workspace: host-direct calls run unsandboxed here.
        sandbox: { hostDirect: 'none' },
        apiTokens: [
          { token: HOST, principal: 'me', tenantId: 'default', scopes: ['sessions', 'host_direct'] },
          { token: SESSIONS_ONLY, principal: 'me', tenantId: 'default', scopes: ['sessions'] },
        ],
        defaultPermissionPolicy: { allow: ['read', 'task'], defaultDecision: 'ask' },
      },
    });
    client = new A3sClient({
      baseUrl: t.url,
      token: HOST,
      WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    });
  });
  afterAll(async () => t?.close());

  it('readFile, grep and bash resolve to the output string, a failed call to its error text, as the seed', async () => {
    const session = await client.session(t.root);
    const text = await session.readFile('a.txt');
    expect(text).toBeTypeOf('string');
    expect(text).toContain('alpha');
    expect(await session.grep('beta')).toContain('a.txt');
    expect(await session.bash('printf seed-bash')).toBe('seed-bash');
    expect(await session.glob('*.txt')).toEqual(['a.txt']);

    const missing = await session.readFile('missing.txt');
    const missingResult = await session.tool('read', { file_path: 'missing.txt' });
    expect(missingResult.exitCode).not.toBe(0);
    expect(missing).toBe(missingResult.output);
    expect(missing).toContain('missing.txt');
    expect(await session.bash('printf partial; exit 3')).toContain('partial');
    // glob has no room for an error text: a failed glob rejects with ToolError.
    const badGlob = await session.glob('../*').catch((error: unknown) => error);
    expect(badGlob).toBeInstanceOf(ToolError);
    expect(badGlob).toMatchObject({ code: 'TOOL_ERROR', details: { tool: 'glob' } });
    // The full ToolResult stays available through tool().
    expect(await session.tool('bash', { command: 'exit 3' })).toMatchObject({ name: 'bash', exitCode: 3 });
    await session.close();
  });

  it('initWarning and hasMemory are properties, isClosed() answers at once; the memory tiers emit memory_cleared', async () => {
    const plain = await client.session(t.root);
    expect(plain.initWarning).toBeNull();
    expect(plain.hasMemory).toBe(false);
    await expect(plain.getWorking()).rejects.toBeInstanceOf(MemoryNotConfiguredError);
    expect(plain.isClosed()).toBe(false);
    expect(await plain.close()).toBe(true);
    expect(plain.isClosed()).toBe(true);

    const session = await client.session(t.root, { memoryStore: { type: 'memory' } });
    expect(session.hasMemory).toBe(true);
    const one = await session.rememberSuccess('tier one', ['read'], 'ok');
    const two = await session.rememberFailure('tier two', 'boom', []);
    expect((await session.getWorking()).map((item) => item.id)).toEqual([one.id, two.id]);
    expect((await session.getShortTerm()).map((item) => item.id)).toEqual([one.id, two.id]);

    expect(await session.clearWorking()).toBeUndefined();
    expect(await session.getWorking()).toEqual([]);
    expect(await session.memoryStats()).toEqual({ longTermCount: 2, shortTermCount: 2, workingCount: 0 });
    await session.clearShortTerm();
    expect(await session.getShortTerm()).toEqual([]);
    expect(await session.memoryStats()).toEqual({ longTermCount: 2, shortTermCount: 0, workingCount: 0 });
    // Clearing again clears nothing: count 0.
    await session.clearWorking();
    const cleared = (await session.traceEvents({ after: 0, limit: 1000 })).filter((e) => e.type === 'memory_cleared');
    expect(cleared.map((e) => e.payload)).toEqual([
      { tier: 'working', count: 2 },
      { tier: 'short_term', count: 2 },
      { tier: 'working', count: 0 },
    ]);
    await session.close();
  });

  it("the seed's MCP names: addMcpServer (positional), addMcpServerConfig, mcpStatus, removeMcpServer", async () => {
    const session = await client.session(t.root);
    const count = await session.addMcpServer('echo', 'stdio', process.execPath, [ECHO_SERVER, 'seed-value']);
    expect(count).toBeGreaterThan(0);
    expect(await session.addMcpServerConfig(echoServerConfig('echo2'))).toBe(count);
    const status = await session.mcpStatus();
    expect(status).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'echo', connected: true, toolCount: count }),
        expect.objectContaining({ name: 'echo2', connected: true, toolCount: count }),
      ]),
    );
    expect(await session.tool('mcp__echo__get_secret', {})).toMatchObject({ output: 'seed-value', exitCode: 0 });
    expect(await session.removeMcpServer('echo')).toBeUndefined();
    await expect(session.removeMcpServer('echo')).rejects.toBeInstanceOf(NotFoundError);
    expect((await session.mcpStatus()).map((s) => s.name)).toEqual(['echo2']);
    expect(await session.removeMcp('echo2')).toBe(true);
    // The extension events of the session's own MCP layer, on its trace.
    const mcpEvents = (await session.traceEvents({ after: 0, limit: 1000 }))
      .map((e) => e.type)
      .filter((type) => type.startsWith('mcp_'));
    expect(mcpEvents).toEqual(
      expect.arrayContaining(['mcp_server_connected', 'mcp_tools_changed', 'mcp_server_disconnected']),
    );
    await expect(session.addMcpServer('bad', 'stdio')).rejects.toBeInstanceOf(ValidationError);
    await expect(session.addMcpServer('bad', 'http')).rejects.toMatchObject({ details: { field: 'url' } });
    await session.close();
  });

  it('cancelConfirmations rejects every pending confirmation and answers how many', async () => {
    const session = await client.session(t.root, { confirmationPolicy: { enabled: true, defaultTimeoutMs: 20_000 } });
    expect(await session.cancelConfirmations()).toBe(0);
    const first = session.governedTool('bash', { command: 'echo one' });
    const second = session.governedTool('bash', { command: 'echo two' });
    await eventually(async () => (await session.pendingConfirmations()).length === 2, 'two pending confirmations');
    expect(await session.cancelConfirmations()).toBe(2);
    expect((await first).exitCode).not.toBe(0);
    expect((await second).exitCode).not.toBe(0);
    expect(await session.pendingConfirmations()).toEqual([]);
    expect(await session.cancelConfirmations()).toBe(0);
    const received = (await session.traceEvents({ after: 0, limit: 1000 })).filter(
      (e) => e.type === 'confirmation_received',
    );
    expect(received.map((e) => (e.payload as { approved: boolean }).approved)).toEqual([false, false]);
    await session.close();
  });

  it('pendingSubagentTasks lists a running task; cancelSubagentTask cancels it once (false after, and for unknown ids)', async () => {
    const session = await client.session(t.root);
    t.fake.script({ when: (r) => lastUser(r).startsWith('slow kid'), delayMs: 20_000, text: 'never seen' });
    const started = await session.task({ agent: 'general', description: 'slow', prompt: 'slow kid', background: true });
    const taskId = String(started.metadata.task_id);
    expect(taskId).not.toBe('undefined');
    await eventually(
      async () => (await session.pendingSubagentTasks()).some((task) => task.task_id === taskId),
      'the task is pending',
    );
    expect(await session.cancelSubagentTask(taskId)).toBe(true);
    await eventually(async () => (await session.subagentTask(taskId)).status === 'cancelled', 'the task is cancelled');
    expect(await session.pendingSubagentTasks()).toEqual([]);
    expect(await session.cancelSubagentTask(taskId)).toBe(false);
    expect(await session.cancelSubagentTask('task-unknown')).toBe(false);
    await session.close();
  });

  it("runEventPage carries the seed's hasMore and latestSequenceExclusive (positional and object forms); run and sendRequest are send", async () => {
    const session = await client.session(t.root);
    t.fake.script({ text: 'paged answer', chunks: 3 });
    expect((await session.run('page me')).text).toBe('paged answer');
    const [record] = await session.runs();
    const all = await session.runEventPage(record.runId);
    const total = all.events.length;
    expect(total).toBeGreaterThan(3);
    expect(all).toMatchObject({
      hasMore: false,
      latestSequenceExclusive: total,
      firstAvailableSequence: 0,
      nextAfterSequence: null,
    });
    const first = await session.runEventPage(record.runId, -1, 2);
    expect(first.events.map((e) => e.metadata.sequence)).toEqual([0, 1]);
    expect(first).toMatchObject({ hasMore: true, latestSequenceExclusive: total, nextAfterSequence: 1, nextAfter: 1 });
    const last = await session.runEventPage(record.runId, { after: total - 2, limit: 5 });
    expect(last.events.map((e) => e.metadata.sequence)).toEqual([total - 1]);
    expect(last).toMatchObject({ hasMore: false, nextAfterSequence: null });

    t.fake.script({ text: 'by request' });
    expect((await session.sendRequest({ prompt: 'object form' })).text).toBe('by request');
    // The seed's attachments are taken now (test/client/client-attachments.test.ts); one without a media type is
    // refused by the client, naming the field, before any request.
    const noType = await session
      .sendRequest({ prompt: 'x', attachments: [{ data: 'AA==' } as never] })
      .catch((error: unknown) => error);
    expect(noType).toBeInstanceOf(ValidationError);
    expect(noType).toMatchObject({ details: { field: 'attachments.0.mediaType' } });
    t.fake.assertDone();
    await session.close();
  });

  it('the thin seed aliases: streamRequest, cancelAsync, cancelAndSettle, closeAsync, delegateTask, gitCommand, webSearch, getArtifact', async () => {
    const session = await client.session(t.root);
    t.fake.script({ text: 'streamed by request' });
    const events = await (await session.streamRequest({ prompt: 'stream object form' })).collect();
    expect(events.at(-1)).toMatchObject({ type: 'agent_end', text: 'streamed by request' });
    expect(await session.cancelAsync()).toBe(false);
    expect(await session.cancelAndSettle()).toBe(false);
    t.fake.script({ text: 'slow words to cancel', chunks: 10, chunkDelayMs: 100 });
    const slow = await session.stream('slow one');
    expect((await slow.nextEvent())?.type).toBe('agent_start');
    expect(await session.cancelAndSettle()).toBe(true);
    expect(await session.currentRun()).toBeNull();
    expect((await slow.collect()).at(-1)).toMatchObject({ type: 'agent_end', payload: { status: 'cancelled' } });
    t.fake.script({ when: (r) => lastUser(r).startsWith('delegated'), text: 'child answer' });
    expect(await session.delegateTask({ agent: 'general', description: 'alias', prompt: 'delegated' })).toMatchObject({
      name: 'task',
      exitCode: 0,
    });
    // gitCommand is the git tool with an object (the workspace is no repository: a failed result, not a rejection).
    expect(await session.gitCommand({ command: 'status' })).toMatchObject({ name: 'git' });
    // webSearch is the web_search tool host-direct; without a configured backend it is a tool error naming the config.
    const searched = await session.webSearch({ query: 'seed' });
    expect(searched).toMatchObject({ name: 'web_search' });
    expect(searched.exitCode).not.toBe(0);
    expect(await session.getArtifact('no-such-artifact')).toBeNull();
    t.fake.assertDone();
    expect(await session.closeAsync()).toBe(true);
    expect(session.isClosed()).toBe(true);
    // The agent's async twins create and resume the same way.
    const twin = await client.sessionAsync(t.root, { sessionId: 'seed-twin', autoSave: true });
    expect(twin.sessionId).toBe('seed-twin');
    await twin.save();
    await twin.close();
    const resumed = await client.resumeSessionAsync('seed-twin');
    expect(resumed.resumed).toBe(true);
    await resumed.close();
  });

  it('writeFile, editFile and patchFile answer the ToolResult, as the seed; resumeRun reaches the resume route', async () => {
    const session = await client.session(t.root);
    expect(await session.writeFile('w.txt', 'one\ntwo\n')).toMatchObject({ name: 'write', exitCode: 0 });
    expect(await session.editFile('w.txt', 'two', 'deux')).toMatchObject({ name: 'edit', exitCode: 0 });
    expect(await session.patchFile('w.txt', '@@ -1,2 +1,2 @@\n-one\n+un\n deux\n')).toMatchObject({
      name: 'patch',
      exitCode: 0,
    });
    expect(await session.readFile('w.txt')).toMatch(/un[\s\S]*deux/);
    // A finished run without a loop checkpoint: the seed's two distinguishable refusals, typed.
    t.fake.script({ text: 'no tools' });
    await session.send('nothing to resume');
    const [record] = await session.runs();
    const refused = await session.resumeRun(record.runId).catch((error: unknown) => error);
    expect(['CHECKPOINT_NOT_FOUND', 'SESSION_STORE_REQUIRED']).toContain((refused as { code?: string }).code);
    t.fake.assertDone();
    await session.close();
  });

  it('recordVerificationReports keeps reports made elsewhere; they count in the summary', async () => {
    const session = await client.session(t.root);
    expect(
      await session.recordVerificationReports([
        {
          subject: 'ci pipeline',
          status: 'failed',
          checks: [
            { id: 'unit', kind: 'command', description: 'unit tests', status: 'passed', required: true },
            { id: 'lint', kind: 'command', description: 'lint', status: 'failed', required: true },
          ],
        },
      ]),
    ).toBeUndefined();
    const [report] = await session.verificationReports();
    expect(report).toMatchObject({
      schema: 'a3s.verification_report.v1',
      subject: 'ci pipeline',
      status: 'failed',
      session_id: session.sessionId,
      run_id: null,
      summary: { total: 2, passed: 1, failed: 1, required_failed: 1 },
    });
    expect((await session.verificationSummary()).status).toBe('failed');
    const completed = (await session.traceEvents({ after: 0, limit: 100 })).filter(
      (e) => e.type === 'verification_completed',
    );
    expect(completed.map((e) => e.payload)).toEqual([
      expect.objectContaining({ report_id: report.id, subject: 'ci pipeline', status: 'failed' }),
    ]);
    // Bad input is a 400 naming the field; a sessions-only caller may not add evidence.
    await expect(
      session.recordVerificationReports([{ subject: '', status: 'passed', checks: [] }]),
    ).rejects.toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('body.reports.0.subject') });
    const sessionsOnly = new A3sClient({ baseUrl: t.url, token: SESSIONS_ONLY });
    const viewer = await sessionsOnly.getSession(session.sessionId);
    await expect(
      viewer.recordVerificationReports([{ subject: 'forged', status: 'passed', checks: [] }]),
    ).rejects.toBeInstanceOf(ForbiddenError);
    expect(await session.verificationReports()).toHaveLength(1);
    await session.close();
  });
});

import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/protocol/chat-message.js';
import { SessionSnapshotV1Schema, type SessionSnapshotV1 } from '../../src/protocol/session-snapshot.js';
import { FileSessionStore } from '../../src/stores/file-session-store.js';
import { parseSnapshot } from '../../src/stores/parse-snapshot.js';
import { decodeRedisValue, encodeRedisValue } from '../../src/stores/redis-value-codec.js';
import { sessionKey } from '../../src/stores/session-key.js';
import { eventually, history, runAndWait, toolMessage, useTestServers } from '../support/run-helpers.js';
import { ACME_TOKEN, fixtureFile, WORKSPACE_TOKEN } from '../support/snapshot-fixture-generator.js';
import { tempDir, writeFiles } from '../support/test-server.js';

// Snapshots saved by real servers and frozen (see the README.md of each folder). Never edit or regenerate
// them: a change to SessionSnapshotV1 adds a folder, and every folder must keep passing.
const SNAPSHOTS = join(import.meta.dirname, '..', 'fixtures', 'snapshots');
const V1 = 'v1-2026-12-02';
/** The same sessions saved once sessions carry `workspacePin`. */
const V1_PIN = 'v1-2026-12-02-pin';
/** The same sessions and one with an "allow always" grant, saved once sessions carry `permissionGrants`. */
const V1_GRANTS = 'v1-2026-12-02-grants';
/** The same sessions and one whose run the provider failed, saved once a run error carries `status`. */
const V1_RUN_STATUS = 'v1-2026-12-02-run-status';
/** The same sessions and one shut down with runs in its run queue, saved once snapshots carry `run_queue`. */
const V1_RUN_QUEUE = 'v1-2026-12-07-run-queue';
/**
 * The same sessions, one shut down while its run waited on a question and one with a queued run's attachment, saved
 * once snapshots carry `pending_questions` and `run_queue_attachments`.
 */
const V1_QUESTIONS = 'v1-2026-12-07-questions';
/** The same sessions and a fork that was compacted, saved once snapshots carry `forkedFrom` and `transcriptEpoch`. */
const V1_FORK = 'v1-2026-12-07-fork';
/** The same sessions and one with a reverted run, saved once snapshots carry `reverted`. */
const V1_REVERT = 'v1-2026-12-07-revert';

/** Every frozen snapshot file, as `<folder>/<tenant>/<id>.json`. */
function fixtureFiles(): string[] {
  const files: string[] = [];
  for (const folder of readdirSync(SNAPSHOTS, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()) {
    for (const tenant of readdirSync(join(SNAPSHOTS, folder), { withFileTypes: true }).filter((e) => e.isDirectory())) {
      for (const file of readdirSync(join(SNAPSHOTS, folder, tenant.name)).sort())
        if (file.endsWith('.json')) files.push(join(folder, tenant.name, file));
    }
  }
  return files;
}

/** A fixture's JSON with its workspace placeholder replaced by `workspace`. */
function fixtureText(file: string, workspace: string): string {
  return readFileSync(join(SNAPSHOTS, file), 'utf8').split(WORKSPACE_TOKEN).join(workspace);
}

/** Put a fixture where a file store under `dataDir` keeps it; returns the snapshot as parsed. */
function stage(file: string, dataDir: string, workspace: string): SessionSnapshotV1 {
  const snapshot = parseSnapshot(JSON.parse(fixtureText(file, workspace)), file);
  const target = join(dataDir, 'sessions', fixtureFile(snapshot.session.ownerTenantId, snapshot.session.id));
  mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
  writeFileSync(target, fixtureText(file, workspace), { mode: 0o600 });
  return snapshot;
}

/** The session's file as the running server last saved it (read only: the server owns the directory). */
function storedFile(dataDir: string, tenantId: string, id: string): SessionSnapshotV1 {
  return parseSnapshot(JSON.parse(readFileSync(join(dataDir, 'sessions', fixtureFile(tenantId, id)), 'utf8')), id);
}

const lastText = (messages: ChatMessage[]) => messages.at(-1)?.content;

describe('frozen SessionSnapshotV1 fixtures', () => {
  it('are all there (a removed fixture fails here)', () => {
    expect(fixtureFiles()).toEqual([
      `${V1}/acme/acme-closed.json`,
      `${V1}/default/artifacts-tasks.json`,
      `${V1}/default/plain-tool-run.json`,
      `${V1_GRANTS}/acme/acme-closed.json`,
      `${V1_GRANTS}/default/allow-always.json`,
      `${V1_GRANTS}/default/artifacts-tasks.json`,
      `${V1_GRANTS}/default/plain-tool-run.json`,
      `${V1_PIN}/acme/acme-closed.json`,
      `${V1_PIN}/default/artifacts-tasks.json`,
      `${V1_PIN}/default/plain-tool-run.json`,
      `${V1_RUN_STATUS}/acme/acme-closed.json`,
      `${V1_RUN_STATUS}/default/allow-always.json`,
      `${V1_RUN_STATUS}/default/artifacts-tasks.json`,
      `${V1_RUN_STATUS}/default/plain-tool-run.json`,
      `${V1_RUN_STATUS}/default/provider-failed.json`,
      `${V1_FORK}/acme/acme-closed.json`,
      `${V1_FORK}/default/allow-always.json`,
      `${V1_FORK}/default/artifacts-tasks.json`,
      `${V1_FORK}/default/forked.json`,
      `${V1_FORK}/default/pending-question.json`,
      `${V1_FORK}/default/plain-tool-run.json`,
      `${V1_FORK}/default/provider-failed.json`,
      `${V1_FORK}/default/queued-attachments.json`,
      `${V1_FORK}/default/run-queue.json`,
      `${V1_QUESTIONS}/acme/acme-closed.json`,
      `${V1_QUESTIONS}/default/allow-always.json`,
      `${V1_QUESTIONS}/default/artifacts-tasks.json`,
      `${V1_QUESTIONS}/default/pending-question.json`,
      `${V1_QUESTIONS}/default/plain-tool-run.json`,
      `${V1_QUESTIONS}/default/provider-failed.json`,
      `${V1_QUESTIONS}/default/queued-attachments.json`,
      `${V1_QUESTIONS}/default/run-queue.json`,
      `${V1_REVERT}/acme/acme-closed.json`,
      `${V1_REVERT}/default/allow-always.json`,
      `${V1_REVERT}/default/artifacts-tasks.json`,
      `${V1_REVERT}/default/forked.json`,
      `${V1_REVERT}/default/pending-question.json`,
      `${V1_REVERT}/default/plain-tool-run.json`,
      `${V1_REVERT}/default/provider-failed.json`,
      `${V1_REVERT}/default/queued-attachments.json`,
      `${V1_REVERT}/default/reverted.json`,
      `${V1_REVERT}/default/run-queue.json`,
      `${V1_RUN_QUEUE}/acme/acme-closed.json`,
      `${V1_RUN_QUEUE}/default/allow-always.json`,
      `${V1_RUN_QUEUE}/default/artifacts-tasks.json`,
      `${V1_RUN_QUEUE}/default/plain-tool-run.json`,
      `${V1_RUN_QUEUE}/default/provider-failed.json`,
      `${V1_RUN_QUEUE}/default/run-queue.json`,
    ]);
  });

  it.each(fixtureFiles())('%s parses with the schema, the store decoders and the file store', async (file) => {
    const raw = JSON.parse(fixtureText(file, '/workspaces/compat')) as unknown;
    const viaSchema = SessionSnapshotV1Schema.parse(raw);
    const snapshot = parseSnapshot(raw, file);
    expect(snapshot).toEqual(viaSchema);
    // Stored under its own tenant and id, with nothing but the workspace to substitute.
    expect(file.endsWith(fixtureFile(snapshot.session.ownerTenantId, snapshot.session.id))).toBe(true);
    expect(snapshot.session.workspace).toBe('/workspaces/compat');
    expect(snapshot.schema_version).toBe(1);
    // The Redis value codec, both encodings.
    for (const threshold of [Number.MAX_SAFE_INTEGER, 0]) {
      const encoded = await encodeRedisValue(JSON.stringify(raw), threshold);
      expect(parseSnapshot(await decodeRedisValue(encoded.encoding, encoded.data, file, {}), file)).toEqual(snapshot);
    }
    // The file store reads the file where it lies, and writes it back unchanged.
    const dataDir = tempDir('a3s-compat-');
    stage(file, dataDir, '/workspaces/compat');
    const store = new FileSessionStore({ dir: join(dataDir, 'sessions') });
    const key = sessionKey(snapshot.session.ownerTenantId, snapshot.session.id);
    expect(await store.load(key)).toEqual(snapshot);
    await store.save(snapshot);
    expect(await store.load(key)).toEqual(snapshot);
    await store.close();
  });
});

describe(`the ${V1} fixtures restore on a real server`, () => {
  const start = useTestServers();

  it('plain-tool-run and artifacts-tasks: hydrated on first use, their state served, and a new run saves the next generation', async () => {
    const root = tempDir('a3s-ws-');
    const dataDir = tempDir('a3s-data-');
    const workspace = join(root, 'project');
    writeFiles(workspace, { 'notes.txt': 'alpha\nbeta\n', 'a.txt': 'alpha\n' });
    const plain = stage(`${V1}/default/plain-tool-run.json`, dataDir, workspace);
    const tasks = stage(`${V1}/default/artifacts-tasks.json`, dataDir, workspace);
    const t = await start({ dataDir, root });

    const info = (await request(t.url).get('/v1/sessions/plain-tool-run').expect(200)).body.session;
    expect(info).toMatchObject({
      id: 'plain-tool-run',
      workspace,
      model: 'openai/test-model',
      labels: { tenantId: 'default', principal: 'anonymous' },
      messageCount: 4,
      autoSave: true,
      closed: false,
      busy: false,
    });
    const messages = await history(t, 'plain-tool-run');
    expect(messages).toEqual(plain.session.messages);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(messages[2]).toMatchObject({ tool_call_id: 'call_read_notes', content: '     1\talpha\n     2\tbeta' });
    const runs = (await request(t.url).get('/v1/sessions/plain-tool-run/runs').expect(200)).body.runs;
    expect(runs).toEqual([
      expect.objectContaining({
        runId: plain.run_records[0]!.runId,
        status: 'completed',
        input: 'What is in notes.txt?',
        result: expect.objectContaining({ text: 'notes.txt lists alpha and beta.' }),
      }),
    ]);
    const trace = (await request(t.url).get('/v1/sessions/plain-tool-run/trace?limit=1000').expect(200)).body.events;
    expect(trace).toEqual(plain.trace_events);

    // The model is sent the restored transcript, and the session's numbering continues after it.
    t.fake.script({
      expect: (r) =>
        expect(r.body.messages.map((m) => m.content)).toEqual(
          expect.arrayContaining(['What is in notes.txt?', 'notes.txt lists alpha and beta.', 'And now?']),
        ),
      text: 'Still alpha and beta.',
    });
    const run = await runAndWait(t, 'plain-tool-run', 'And now?');
    expect(run.run.status).toBe('completed');
    expect(run.result.text).toBe('Still alpha and beta.');
    t.fake.assertDone();
    await eventually(
      () => storedFile(dataDir, 'default', 'plain-tool-run').generation > plain.generation,
      'the run to be saved',
    );
    const saved = storedFile(dataDir, 'default', 'plain-tool-run');
    expect(saved.generation).toBe(plain.generation + 1);
    expect(saved.session.messages.slice(0, 4)).toEqual(plain.session.messages);
    expect(saved.session.messages.slice(4)).toEqual([
      { role: 'user', content: 'And now?' },
      { role: 'assistant', content: 'Still alpha and beta.' },
    ]);
    expect(saved.run_records.map((r) => r.runId)).toEqual([plain.run_records[0]!.runId, run.runId]);
    expect(saved.session.sessionSequence).toBeGreaterThan(plain.session.sessionSequence);
    expect(saved.trace_events[0]).toEqual(plain.trace_events[0]);
    expect((await history(t, 'plain-tool-run')).map((m) => m.content).slice(-1)).toEqual(['Still alpha and beta.']);

    // The artifact, the delegated task and the verification report come back as they were stored.
    const artifact = tasks.artifacts[0]!;
    expect(
      (await request(t.url).get(`/v1/sessions/artifacts-tasks/artifacts/${artifact.id}`).expect(200)).body.artifact,
    ).toMatchObject({ id: artifact.id, content: artifact.content });
    expect(artifact.content).toContain('line 60 ');
    expect(String(tasks.session.messages[2]!.content)).toContain(`full output stored as artifact ${artifact.id}`);
    const taskList = (await request(t.url).get('/v1/sessions/artifacts-tasks/tasks').expect(200)).body.tasks;
    expect(taskList).toEqual([
      expect.objectContaining({
        task_id: tasks.subagent_tasks[0]!.task_id,
        agent: 'explore',
        status: 'completed',
        output: 'a.txt holds alpha',
        success: true,
      }),
    ]);
    const reports = (await request(t.url).get('/v1/sessions/artifacts-tasks/verifications').expect(200)).body.reports;
    expect(reports).toEqual([
      expect.objectContaining({ id: tasks.verification_reports[0]!.id, subject: 'docs smoke', status: 'passed' }),
    ]);
    expect(lastText(await history(t, 'artifacts-tasks'))).toBe('The explorer says a.txt holds alpha.');
  });

  it('acme-closed: stays closed until resume: true, then keeps its tenant, labels, policy and replay ids', async () => {
    const root = tempDir('a3s-ws-');
    const dataDir = tempDir('a3s-data-');
    const workspace = join(root, 'project');
    writeFiles(workspace, { 'README.md': '# acme\n' });
    const closed = stage(`${V1}/acme/acme-closed.json`, dataDir, workspace);
    const t = await start({ dataDir, root, config: { apiTokens: [ACME_TOKEN] } });
    const auth = { authorization: `Bearer ${ACME_TOKEN.token}` };

    expect((await request(t.url).get('/v1/sessions/acme-closed').set(auth).expect(410)).body.error.code).toBe(
      'SESSION_CLOSED',
    );
    const resumed = (
      await request(t.url).post('/v1/sessions').set(auth).send({ sessionId: 'acme-closed', resume: true }).expect(201)
    ).body;
    expect(resumed.resumed).toBe(true);
    expect(resumed.session).toMatchObject({
      id: 'acme-closed',
      workspace,
      closed: false,
      messageCount: 5,
      labels: { tenantId: 'acme', principal: 'alice', correlationId: 'ticket-4711' },
    });
    const messages = (await request(t.url).get('/v1/sessions/acme-closed/history').set(auth).expect(200)).body
      .messages as ChatMessage[];
    expect(messages).toEqual(closed.session.messages);
    expect(messages[3]).toMatchObject({
      tool_call_id: 'call_bash',
      content: 'Tool bash was denied by permission rule "bash" (permissionPolicy).',
    });
    // Reopening is stored at once: the next generation, no longer closed.
    const reopened = storedFile(dataDir, 'acme', 'acme-closed');
    expect(reopened.generation).toBe(closed.generation + 1);
    expect(reopened.session.closed).toBeUndefined();
    expect(reopened.session.messages).toEqual(closed.session.messages);

    // The stored permission policy still denies bash; the replay HostEnv continues its ids after idCounter.
    t.fake.script(
      { toolCalls: [{ id: 'call_bash_again', name: 'bash', arguments: { command: 'ls' } }] },
      { text: 'Bash is still denied.' },
    );
    const run = (
      await request(t.url)
        .post('/v1/sessions/acme-closed/runs')
        .set(auth)
        .send({ input: 'Try bash once more.', wait: true })
        .expect(200)
    ).body;
    expect(run.run.status).toBe('completed');
    expect(run.result.text).toBe('Bash is still denied.');
    expect(run.runId).toBe('fx-run-2');
    expect(toolMessage(t, 'call_bash_again')).toBe(
      'Tool bash was denied by permission rule "bash" (permissionPolicy).',
    );
    t.fake.assertDone();

    await eventually(() => storedFile(dataDir, 'acme', 'acme-closed').run_records.length === 2, 'the run to be saved');
    const saved = storedFile(dataDir, 'acme', 'acme-closed');
    expect(saved.generation).toBe(closed.generation + 2);
    expect(saved.session.closed).toBeUndefined();
    expect(saved.session).toMatchObject({
      ownerTenantId: 'acme',
      policyBounded: true,
      idCounter: 2,
      createdAtMs: closed.session.createdAtMs,
      labels: closed.session.labels,
    });
    expect(saved.session.options.permissionPolicy).toEqual(closed.session.options.permissionPolicy);
    expect(saved.session.options.confirmationPolicy).toEqual({
      enabled: true,
      defaultTimeoutMs: 5000,
      timeoutAction: 'reject',
    });
    expect(lastText(saved.session.messages)).toBe('Bash is still denied.');
    expect(saved.session.messages).toHaveLength(closed.session.messages.length + 4);
  });
});

describe(`the ${V1_PIN} fixtures: a pin of another machine`, () => {
  const start = useTestServers();

  it('restores on this machine with a new pin, a workspace_warning event and an initWarning, and saves the new pin', async () => {
    const root = tempDir('a3s-ws-');
    const dataDir = tempDir('a3s-data-');
    const workspace = join(root, 'project');
    writeFiles(workspace, { 'notes.txt': 'alpha\nbeta\n' });
    const plain = stage(`${V1_PIN}/default/plain-tool-run.json`, dataDir, workspace);
    expect(plain.session.workspacePin).toEqual({
      dev: expect.stringMatching(/^\d+$/),
      ino: expect.stringMatching(/^\d+$/),
    });
    const t = await start({ dataDir, root });
    const info = (await request(t.url).get('/v1/sessions/plain-tool-run').expect(200)).body.session;
    expect(info.initWarning).toContain(`workspace ${workspace} was pinned again`);
    const trace = (await request(t.url).get('/v1/sessions/plain-tool-run/trace?limit=1000').expect(200)).body
      .events as { type: string; payload: Record<string, unknown> }[];
    expect(trace.slice(0, plain.trace_events.length)).toEqual(plain.trace_events);
    expect(trace.slice(plain.trace_events.length)).toEqual([
      expect.objectContaining({
        type: 'workspace_warning',
        payload: expect.objectContaining({ kind: 'repinned', workspace }),
      }),
    ]);
    t.fake.script({ text: 'Still here.' });
    expect((await runAndWait(t, 'plain-tool-run', 'Again?')).result.text).toBe('Still here.');
    await eventually(
      () => storedFile(dataDir, 'default', 'plain-tool-run').generation > plain.generation,
      'the run to be saved',
    );
    const saved = storedFile(dataDir, 'default', 'plain-tool-run').session.workspacePin;
    expect(saved).toBeDefined();
    expect(saved).not.toEqual(plain.session.workspacePin);
  });
});

describe(`the ${V1_GRANTS} fixtures: an "allow always" grant restored`, () => {
  const start = useTestServers();

  it('allow-always: the granted ls runs without a confirmation, the grant is saved again; an older snapshot has none', async () => {
    const root = tempDir('a3s-ws-');
    const dataDir = tempDir('a3s-data-');
    const workspace = join(root, 'project');
    writeFiles(workspace, { 'a.txt': 'alpha\n', 'notes.txt': 'alpha\nbeta\n' });
    const granted = stage(`${V1_GRANTS}/default/allow-always.json`, dataDir, workspace);
    expect(granted.session.permissionGrants).toEqual(['ls\u0000']);
    expect(stage(`${V1}/default/plain-tool-run.json`, dataDir, workspace).session.permissionGrants).toBeUndefined();
    const t = await start({ dataDir, root });
    t.fake.script({ toolCalls: [{ id: 'call_ls_again', name: 'ls', arguments: {} }] }, { text: 'Still a.txt.' });
    const run = (
      await request(t.url).post('/v1/sessions/allow-always/runs').send({ input: 'List again', wait: true }).expect(200)
    ).body as { runId: string; result: { text: string } };
    expect(run.result.text).toBe('Still a.txt.');
    expect(toolMessage(t, 'call_ls_again')).toContain('a.txt');
    expect(
      (await request(t.url).get('/v1/sessions/allow-always/confirmations').expect(200)).body.confirmations,
    ).toEqual([]);
    await eventually(
      () => storedFile(dataDir, 'default', 'allow-always').generation > granted.generation,
      'the run to be saved',
    );
    expect(storedFile(dataDir, 'default', 'allow-always').session.permissionGrants).toEqual(['ls\u0000']);
    // The older fixture loads without grants and is saved without them.
    t.fake.script({ text: 'Plain.' });
    expect((await runAndWait(t, 'plain-tool-run', 'Again?')).result.text).toBe('Plain.');
    await eventually(
      () => storedFile(dataDir, 'default', 'plain-tool-run').run_records.length === 2,
      'the run to be saved',
    );
    expect(storedFile(dataDir, 'default', 'plain-tool-run').session.permissionGrants).toBeUndefined();
    t.fake.assertDone();
  });
});

describe(`the ${V1_RUN_STATUS} fixtures: a failed run's status restored`, () => {
  const start = useTestServers();

  it('provider-failed: the run is served with PROVIDER_ERROR and status 500, and saved with it again', async () => {
    const root = tempDir('a3s-ws-');
    const dataDir = tempDir('a3s-data-');
    const workspace = join(root, 'project');
    writeFiles(workspace, { 'hello.txt': 'hello\n' });
    const failed = stage(`${V1_RUN_STATUS}/default/provider-failed.json`, dataDir, workspace);
    expect(failed.run_records[0]?.error).toMatchObject({ code: 'PROVIDER_ERROR', status: 500 });
    const t = await start({ dataDir, root });
    const runs = (await request(t.url).get('/v1/sessions/provider-failed/runs').expect(200)).body.runs;
    expect(runs).toEqual([expect.objectContaining({ status: 'failed', error: failed.run_records[0]!.error })]);
    t.fake.script({ text: 'Hello.' });
    expect((await runAndWait(t, 'provider-failed', 'Again?')).result.text).toBe('Hello.');
    await eventually(
      () => storedFile(dataDir, 'default', 'provider-failed').run_records.length === 2,
      'the run to be saved',
    );
    expect(storedFile(dataDir, 'default', 'provider-failed').run_records[0]?.error).toEqual(
      failed.run_records[0]!.error,
    );
    t.fake.assertDone();
  });
});

describe(`the ${V1_RUN_QUEUE} fixtures: a run queue restored`, () => {
  const start = useTestServers();

  it('run-queue: the queued runs start in order when the session is opened, their key still answers them', async () => {
    const root = tempDir('a3s-ws-');
    const dataDir = tempDir('a3s-data-');
    const workspace = join(root, 'project');
    writeFiles(workspace, { 'hello.txt': 'hello\n' });
    const saved = stage(`${V1_RUN_QUEUE}/default/run-queue.json`, dataDir, workspace);
    const [two, three] = saved.run_queue!;
    expect(saved.run_records.filter((r) => r.status === 'queued').map((r) => r.runId)).toEqual([two, three]);
    expect(stage(`${V1_RUN_STATUS}/default/plain-tool-run.json`, dataDir, workspace).run_queue).toBeUndefined();
    const t = await start({ dataDir, root });
    t.fake.script({ text: 'Two.' }, { text: 'Three.' });
    // Any request opens the session: its queue resumes.
    await request(t.url).get('/v1/sessions/run-queue/runs').expect(200);
    await eventually(async () => {
      const runs = (await request(t.url).get('/v1/sessions/run-queue/runs').expect(200)).body.runs as Array<{
        runId: string;
        status: string;
      }>;
      return runs.find((r) => r.runId === three)?.status === 'completed';
    }, 'the queue to run');
    expect((await history(t, 'run-queue')).map((m) => m.content).slice(-4)).toEqual([
      'Say two',
      'Two.',
      'Say three',
      'Three.',
    ]);
    const again = await request(t.url)
      .post('/v1/sessions/run-queue/runs')
      .set('Idempotency-Key', 'queued-three')
      .send({ input: 'Say three', multitaskStrategy: 'enqueue' })
      .expect(202);
    expect(again.body).toMatchObject({ runId: three, existing: true, run: { status: 'completed' } });
    await eventually(
      () => storedFile(dataDir, 'default', 'run-queue').run_queue === undefined,
      'the empty queue saved',
    );
    t.fake.assertDone();
  });
});

describe(`the ${V1_QUESTIONS} fixtures: a kept question restored`, () => {
  const start = useTestServers();

  it('pending-question: the question is read back; its time has passed, so nothing is listed and an answer is settled', async () => {
    const root = tempDir('a3s-ws-');
    const dataDir = tempDir('a3s-data-');
    const workspace = join(root, 'project');
    writeFiles(workspace, { 'hello.txt': 'hello\n' });
    const saved = stage(`${V1_QUESTIONS}/default/pending-question.json`, dataDir, workspace);
    const [kept] = saved.pending_questions!;
    expect(kept).toMatchObject({ question: 'Which greeting?', options: ['hello', 'hi'], tool_call_id: 'call_ask' });
    expect(saved.run_records.map((r) => [r.runId, r.status])).toEqual([[kept!.run_id, 'cancelled']]);
    expect(stage(`${V1_RUN_QUEUE}/default/run-queue.json`, dataDir, workspace).pending_questions).toBeUndefined();
    const t = await start({ dataDir, root });
    const session = (await request(t.url).get('/v1/sessions/pending-question').expect(200)).body.session as {
      askUser: boolean;
    };
    expect(session.askUser).toBe(true);
    expect((await request(t.url).get('/v1/sessions/pending-question/questions').expect(200)).body.questions).toEqual(
      [],
    );
    const late = await request(t.url)
      .post(`/v1/sessions/pending-question/questions/${kept!.question_id}`)
      .send({ option: 'hi' })
      .expect(409);
    expect(late.body.error.code).toBe('QUESTION_SETTLED');
    const tools = (await request(t.url).get('/v1/sessions/pending-question/tools').expect(200)).body.tools as Array<{
      name: string;
    }>;
    expect(tools.map((tool) => tool.name)).toContain('ask_user');
    t.fake.assertDone();
  });
});

describe(`the ${V1_QUESTIONS} fixtures: a queued run's attachments restored`, () => {
  const start = useTestServers();

  it('queued-attachments: the queue resumes; the queued run names its file (whose bytes the fixture does not hold)', async () => {
    const root = tempDir('a3s-ws-');
    const dataDir = tempDir('a3s-data-');
    const workspace = join(root, 'project');
    writeFiles(workspace, { 'hello.txt': 'hello\n' });
    const saved = stage(`${V1_QUESTIONS}/default/queued-attachments.json`, dataDir, workspace);
    const [queued] = saved.run_queue!;
    expect(saved.run_queue_attachments?.[queued!]).toMatchObject([
      { type: 'file', mediaType: 'text/plain', name: 'notes.txt', bytes: 13 },
    ]);
    const t = await start({ dataDir, root });
    t.fake.script({
      expect: (req) => {
        const last = (req.body.messages as ChatMessage[]).at(-1);
        expect(last?.role).toBe('user');
        expect(last?.content).toEqual([
          { type: 'text', text: 'Read the notes' },
          { type: 'text', text: expect.stringMatching(/notes\.txt.*no longer stored/) },
        ]);
      },
      text: 'No notes.',
    });
    await eventually(async () => {
      const run = (await request(t.url).get(`/v1/sessions/queued-attachments/runs/${queued}`).expect(200)).body.run as {
        status: string;
      };
      return run.status === 'completed';
    }, 'the queued run to run');
    t.fake.assertDone();
  });
});

describe(`the ${V1_FORK} fixtures: a fork restored`, () => {
  const start = useTestServers();

  it('forked: still a fork after the restore; its runs started before its compaction cannot be forked at, a new one can', async () => {
    const root = tempDir('a3s-ws-');
    const dataDir = tempDir('a3s-data-');
    const workspace = join(root, 'project');
    writeFiles(workspace, { 'hello.txt': 'hello\n' });
    const saved = stage(`${V1_FORK}/default/forked.json`, dataDir, workspace);
    expect(saved.session.forkedFrom).toMatchObject({ sessionId: 'fork-parent', atMessage: 2 });
    expect(saved.session.transcriptEpoch).toBe(1);
    expect(saved.run_records.map((r) => [r.input, r.transcriptStart, r.transcriptEpoch])).toEqual([
      ['Say three', 2, 0],
      ['/compact', 4, 0],
    ]);
    expect(stage(`${V1_QUESTIONS}/default/plain-tool-run.json`, dataDir, workspace).session.forkedFrom).toBeUndefined();
    const t = await start({ dataDir, root });
    const info = (await request(t.url).get('/v1/sessions/forked').expect(200)).body.session;
    expect(info).toMatchObject({ forkedFrom: saved.session.forkedFrom, messageCount: saved.session.messages.length });
    expect(
      (await request(t.url).get('/v1/sessions/plain-tool-run').expect(200)).body.session.forkedFrom,
    ).toBeUndefined();
    for (const run of saved.run_records) {
      const refused = await request(t.url).post('/v1/sessions/forked/fork').send({ atRunId: run.runId }).expect(409);
      expect(refused.body.error.code).toBe('FORK_POINT_UNAVAILABLE');
    }
    t.fake.script({ text: 'Four.' });
    const fourth = await runAndWait(t, 'forked', 'Say four');
    const again = await request(t.url).post('/v1/sessions/forked/fork').send({ atRunId: fourth.runId }).expect(201);
    expect(again.body.session).toMatchObject({
      messageCount: saved.session.messages.length,
      forkedFrom: { sessionId: 'forked', atRunId: fourth.runId, atMessage: saved.session.messages.length },
    });
    await eventually(() => storedFile(dataDir, 'default', 'forked').run_records.length === 3, 'the run to be saved');
    expect(storedFile(dataDir, 'default', 'forked').session).toMatchObject({
      forkedFrom: saved.session.forkedFrom,
      transcriptEpoch: 1,
    });
    t.fake.assertDone();
  });
});

describe(`the ${V1_REVERT} fixtures: a reverted run restored`, () => {
  const start = useTestServers();

  it('reverted: its messages stay hidden after the restore; unrevert gives them back to the model', async () => {
    const root = tempDir('a3s-ws-');
    const dataDir = tempDir('a3s-data-');
    const workspace = join(root, 'project');
    writeFiles(workspace, { 'hello.txt': 'hello\n' });
    const saved = stage(`${V1_REVERT}/default/reverted.json`, dataDir, workspace);
    expect(saved.session.reverted).toMatchObject({ atMessage: 2, epoch: 0, paths: [] });
    expect(saved.session.reverted?.messages).toHaveLength(2);
    expect(stage(`${V1_FORK}/default/forked.json`, dataDir, workspace).session.reverted).toBeUndefined();
    const t = await start({ dataDir, root });
    expect((await history(t, 'reverted')).map((m) => m.content)).toEqual(['Say one', 'One.']);
    const back = await request(t.url).post('/v1/sessions/reverted/unrevert').send({}).expect(200);
    expect(back.body).toMatchObject({ files: [], messages: 2, reverted_run_ids: saved.session.reverted?.runIds });
    expect((await history(t, 'reverted')).map((m) => m.content)).toEqual(['Say one', 'One.', 'Say two', 'Two.']);
    t.fake.script({ text: 'Three.' });
    await runAndWait(t, 'reverted', 'Say three');
    expect(t.fake.requests.at(-1)?.raw).toContain('Say two');
    await eventually(() => storedFile(dataDir, 'default', 'reverted').session.reverted === undefined, 'the save');
    t.fake.assertDone();
  });
});

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { LimitsSchema } from '../../src/config/limits-config.js';
import { encodeKeyPart } from '../../src/stores/session-key.js';
import { startTestServer, type TestServer, type TestServerOptions } from './test-server.js';
import { reverted } from './snapshot-fixture-revert.js';

/** The placeholder a frozen snapshot holds instead of its session's absolute workspace path. */
export const WORKSPACE_TOKEN = '__WORKSPACE__';

/** The API token fixture "acme-closed" is created with (one tenant only: workspaces are not split per tenant). */
export const ACME_TOKEN = {
  token: 'token-acme-fixture-0001',
  principal: 'alice',
  tenantId: 'acme',
  scopes: ['sessions'],
};

/** The seed's verification example (API.md "Verification"). */
const VERIFICATION = {
  subject: 'docs smoke',
  commands: [{ id: 'echo', kind: 'command', description: 'echo works', command: 'printf verify', required: true }],
};

/** The store-relative file of a session: `<tenant>/<session id>.json`, both parts encoded as the file store does. */
export function fixtureFile(tenantId: string, sessionId: string): string {
  return join(encodeKeyPart(tenantId), `${encodeKeyPart(sessionId)}.json`);
}

/** A saved snapshot's text with its workspace path replaced by WORKSPACE_TOKEN; throws if another temp path is left in it. */
export function freeze(text: string, workspace: string, tempDirs: readonly string[]): string {
  const frozen = text.split(workspace).join(WORKSPACE_TOKEN);
  for (const dir of tempDirs)
    if (frozen.includes(dir)) throw new Error(`the snapshot still names ${dir}: add a placeholder for it`);
  return frozen;
}

/**
 * Produce today's snapshots with a real server and write them, frozen (placeholders for paths, otherwise
 * verbatim), into `outDir/<tenant>/<id>.json`; returns the files written (relative to outDir).
 */
export async function generateSnapshotFixtures(outDir: string): Promise<string[]> {
  return [
    await plainToolRun(outDir),
    await acmeClosed(outDir),
    await artifactsTasksVerification(outDir),
    await allowAlways(outDir),
    await providerFailed(outDir),
    await runQueue(outDir),
    await pendingQuestion(outDir),
    await queuedAttachments(outDir),
    await forked(outDir),
    await reverted(outDir, produce),
  ];
}

interface Produced {
  t: TestServer;
  workspace: string;
  tenantId: string;
  sessionId: string;
}

/** Run `body` on a fresh server, close it (its shutdown save included), then freeze the session's file into outDir. */
async function produce(
  outDir: string,
  tenantId: string,
  sessionId: string,
  options: TestServerOptions,
  body: (p: Produced) => Promise<void>,
): Promise<string> {
  const t = await startTestServer(options);
  const workspace = join(t.root, 'project');
  try {
    await body({ t, workspace, tenantId, sessionId });
    t.fake.assertDone();
  } finally {
    await t.close();
  }
  const rel = fixtureFile(tenantId, sessionId);
  const stored = join(t.dataDir, 'sessions', rel);
  if (!existsSync(stored)) throw new Error(`no snapshot was saved at ${stored}`);
  mkdirSync(join(outDir, encodeKeyPart(tenantId)), { recursive: true });
  // The store's bytes as they are (compact JSON), the workspace path aside.
  writeFileSync(join(outDir, rel), freeze(readFileSync(stored, 'utf8'), workspace, [t.root, t.dataDir]));
  return rel;
}

/** (a) A plain autoSave session after one run with a read tool call. */
function plainToolRun(outDir: string): Promise<string> {
  return produce(
    outDir,
    'default',
    'plain-tool-run',
    { files: { 'project/notes.txt': 'alpha\nbeta\n' } },
    async ({ t, workspace, sessionId }) => {
      await request(t.url).post('/v1/sessions').send({ sessionId, workspace, autoSave: true }).expect(201);
      t.fake.script(
        { toolCalls: [{ id: 'call_read_notes', name: 'read', arguments: { file_path: 'notes.txt' } }] },
        { text: 'notes.txt lists alpha and beta.' },
      );
      const run = await request(t.url)
        .post(`/v1/sessions/${sessionId}/runs`)
        .send({ input: 'What is in notes.txt?', wait: true })
        .expect(200);
      if (run.body.run.status !== 'completed') throw new Error(`run ended ${run.body.run.status}`);
    },
  );
}

/** (b) A tenant's session with its own permission and confirmation policies, replay ids, a denied call, closed by its client. */
function acmeClosed(outDir: string): Promise<string> {
  const auth = { authorization: `Bearer ${ACME_TOKEN.token}` };
  const options = { files: { 'project/README.md': '# acme\n' }, config: { apiTokens: [ACME_TOKEN] } };
  return produce(outDir, 'acme', 'acme-closed', options, async ({ t, workspace, sessionId }) => {
    await request(t.url)
      .post('/v1/sessions')
      .set(auth)
      .send({
        sessionId,
        workspace,
        autoSave: true,
        correlationId: 'ticket-4711',
        permissionPolicy: { allow: ['read', 'ls'], ask: ['write'], deny: ['bash'], defaultDecision: 'deny' },
        confirmationPolicy: { enabled: true, defaultTimeoutMs: 5_000, timeoutAction: 'reject' },
        hostEnv: { sequentialIdPrefix: 'fx', fixedTimeMs: 1_764_633_600_000 },
      })
      .expect(201);
    t.fake.script(
      {
        toolCalls: [
          { id: 'call_readme', name: 'read', arguments: { file_path: 'README.md' } },
          { id: 'call_bash', name: 'bash', arguments: { command: 'rm -rf /' } },
        ],
      },
      { text: 'The README is a heading; bash is denied here.' },
    );
    const run = await request(t.url)
      .post(`/v1/sessions/${sessionId}/runs`)
      .set(auth)
      .send({ input: 'Read README.md, then clean up.', wait: true })
      .expect(200);
    if (run.body.run.status !== 'completed') throw new Error(`run ended ${run.body.run.status}`);
    await request(t.url).delete(`/v1/sessions/${sessionId}`).set(auth).expect(200);
  });
}

/** (c) Tool output over the cap (an artifact), a delegated task (subagent_tasks) and a verification report. */
function artifactsTasksVerification(outDir: string): Promise<string> {
  const big = Array.from({ length: 60 }, (_, i) => `line ${i + 1} ${'z'.repeat(40)}`).join('\n');
  const options = {
    files: { 'project/big.txt': `${big}\n`, 'project/a.txt': 'alpha\n' },
    config: {
      limits: LimitsSchema.parse({ toolOutputBytes: 1024 }),
      defaultPermissionPolicy: { allow: ['read', 'task'], defaultDecision: 'deny' },
    },
  };
  return produce(outDir, 'default', 'artifacts-tasks', options, async ({ t, workspace, sessionId }) => {
    await request(t.url).post('/v1/sessions').send({ sessionId, workspace, autoSave: true }).expect(201);
    t.fake.script(
      { toolCalls: [{ id: 'call_big', name: 'read', arguments: { file_path: 'big.txt' } }] },
      { text: 'big.txt is long.' },
    );
    await request(t.url).post(`/v1/sessions/${sessionId}/runs`).send({ input: 'Read big.txt', wait: true }).expect(200);
    const last = (r: { body: { messages: Array<{ role: string; content?: unknown }> } }) => r.body.messages.at(-1);
    const prompt = (r: { body: { messages: Array<{ role: string; content?: unknown }> } }) =>
      String(r.body.messages.findLast((m) => m.role === 'user')?.content ?? '');
    t.fake.script(
      {
        when: (r) => prompt(r).startsWith('Delegate') && last(r)?.role === 'user',
        toolCalls: [
          {
            id: 'call_task',
            name: 'task',
            arguments: { agent: 'explore', description: 'read a.txt', prompt: 'Read a.txt and say what it holds' },
          },
        ],
      },
      {
        when: (r) => prompt(r).startsWith('Read a.txt') && last(r)?.role === 'user',
        toolCalls: [{ id: 'child_read', name: 'read', arguments: { file_path: 'a.txt' } }],
      },
      { when: (r) => prompt(r).startsWith('Read a.txt') && last(r)?.role === 'tool', text: 'a.txt holds alpha' },
      {
        when: (r) => prompt(r).startsWith('Delegate') && last(r)?.role === 'tool',
        text: 'The explorer says a.txt holds alpha.',
      },
    );
    const run = await request(t.url)
      .post(`/v1/sessions/${sessionId}/runs`)
      .send({ input: 'Delegate reading a.txt', wait: true })
      .expect(200);
    if (run.body.run.status !== 'completed') throw new Error(`run ended ${run.body.run.status}`);
    await request(t.url).post(`/v1/sessions/${sessionId}/verifications`).send(VERIFICATION).expect(201);
    await request(t.url).post(`/v1/sessions/${sessionId}/save`).expect(200);
  });
}

/** (d) An "allow always" answer: the session's own policy asks for ls, the answer grants it (session.permissionGrants). */
function allowAlways(outDir: string): Promise<string> {
  return produce(
    outDir,
    'default',
    'allow-always',
    { files: { 'project/a.txt': 'alpha\n' } },
    async ({ t, workspace, sessionId }) => {
      const policy = {
        permissionPolicy: { ask: ['ls'], defaultDecision: 'allow' },
        confirmationPolicy: { enabled: true, defaultTimeoutMs: 20_000, timeoutAction: 'reject' },
      };
      await request(t.url)
        .post('/v1/sessions')
        .send({ sessionId, workspace, autoSave: true, ...policy })
        .expect(201);
      t.fake.script(
        { toolCalls: [{ id: 'call_ls', name: 'ls', arguments: {} }] },
        { text: 'The workspace holds a.txt.' },
      );
      const runId = (
        await request(t.url).post(`/v1/sessions/${sessionId}/runs`).send({ input: 'List the workspace' }).expect(202)
      ).body.runId as string;
      let toolId: string | undefined;
      for (let i = 0; i < 500 && toolId === undefined; i += 1) {
        toolId = (
          (await request(t.url).get(`/v1/sessions/${sessionId}/confirmations`).expect(200)).body.confirmations as {
            toolId: string;
          }[]
        )[0]?.toolId;
        if (toolId === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      if (toolId === undefined) throw new Error('the ls call asked for no confirmation');
      const answer = await request(t.url)
        .post(`/v1/sessions/${sessionId}/confirmations/${toolId}`)
        .send({ approved: true, always: true })
        .expect(200);
      if (answer.body.always !== true) throw new Error('allow always was not granted');
      for (let i = 0; i < 500; i += 1) {
        const run = (await request(t.url).get(`/v1/sessions/${sessionId}/runs/${runId}`).expect(200)).body.run as {
          status: string;
        };
        if (run.status === 'completed') return;
        if (run.status === 'failed' || run.status === 'cancelled') throw new Error(`run ended ${run.status}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error('the run did not finish');
    },
  );
}

/** (e) A run the provider failed (HTTP 500, no retries configured): its run record's error carries the status. */
function providerFailed(outDir: string): Promise<string> {
  return produce(
    outDir,
    'default',
    'provider-failed',
    { files: { 'project/hello.txt': 'hello\n' } },
    async ({ t, workspace, sessionId }) => {
      await request(t.url).post('/v1/sessions').send({ sessionId, workspace, autoSave: true }).expect(201);
      t.fake.script({ error: { status: 500, message: 'the provider is down' } });
      const run = await request(t.url)
        .post(`/v1/sessions/${sessionId}/runs`)
        .send({ input: 'Say hello', wait: true })
        .expect(200);
      if (run.body.run.status !== 'failed' || run.body.run.error?.status !== 500)
        throw new Error(`run ended ${run.body.run.status} ${JSON.stringify(run.body.run.error)}`);
    },
  );
}

/**
 * (f) An autoSave session shut down with two runs in its run queue (multitaskStrategy enqueue, the second with an
 * Idempotency-Key) behind a run the provider never answered: saved with `run_queue`.
 */
function runQueue(outDir: string): Promise<string> {
  return produce(
    outDir,
    'default',
    'run-queue',
    { files: { 'project/hello.txt': 'hello\n' } },
    async ({ t, workspace, sessionId }) => {
      await request(t.url).post('/v1/sessions').send({ sessionId, workspace, autoSave: true }).expect(201);
      t.fake.script({ text: 'One.' }, { hang: true });
      const runs = `/v1/sessions/${sessionId}/runs`;
      await request(t.url).post(runs).send({ input: 'Say one', wait: true }).expect(200);
      await request(t.url).post(runs).send({ input: 'Think long' }).expect(202);
      await t.fake.waitForRequests(2);
      await request(t.url).post(runs).send({ input: 'Say two', multitaskStrategy: 'enqueue' }).expect(202);
      await request(t.url)
        .post(runs)
        .set('Idempotency-Key', 'queued-three')
        .send({ input: 'Say three', multitaskStrategy: 'enqueue' })
        .expect(202);
    },
  );
}

/**
 * (g) An autoSave session that offers ask_user (askUser), shut down while its run waited on a question (a read
 * before it in the same round): saved with `pending_questions`.
 */
function pendingQuestion(outDir: string): Promise<string> {
  return produce(
    outDir,
    'default',
    'pending-question',
    { files: { 'project/hello.txt': 'hello\n' } },
    async ({ t, workspace, sessionId }) => {
      await request(t.url)
        .post('/v1/sessions')
        .send({
          sessionId,
          workspace,
          autoSave: true,
          askUser: true,
          // Short, so the restored fixture's question is always past its time (timeless tests).
          confirmationPolicy: { enabled: false, defaultTimeoutMs: 2_000 },
        })
        .expect(201);
      t.fake.script({
        toolCalls: [
          { id: 'call_read', name: 'read', arguments: { file_path: 'hello.txt' } },
          { id: 'call_ask', name: 'ask_user', arguments: { question: 'Which greeting?', options: ['hello', 'hi'] } },
        ],
      });
      await request(t.url).post(`/v1/sessions/${sessionId}/runs`).send({ input: 'Greet' }).expect(202);
      for (let i = 0; i < 500; i += 1) {
        const listed = (await request(t.url).get(`/v1/sessions/${sessionId}/questions`).expect(200)).body
          .questions as unknown[];
        if (listed.length === 1) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error('the question was not asked');
    },
  );
}

/**
 * (h) An autoSave session shut down with a run queued (multitaskStrategy enqueue) that carries an inline text file,
 * behind a run the provider never answered: saved with `run_queue` and `run_queue_attachments` (references only).
 */
function queuedAttachments(outDir: string): Promise<string> {
  return produce(
    outDir,
    'default',
    'queued-attachments',
    { files: { 'project/hello.txt': 'hello\n' } },
    async ({ t, workspace, sessionId }) => {
      await request(t.url).post('/v1/sessions').send({ sessionId, workspace, autoSave: true }).expect(201);
      t.fake.script({ hang: true });
      const runs = `/v1/sessions/${sessionId}/runs`;
      await request(t.url).post(runs).send({ input: 'Think long' }).expect(202);
      await t.fake.waitForRequests(1);
      const notes = Buffer.from('queued notes\n').toString('base64');
      await request(t.url)
        .post(runs)
        .send({
          input: 'Read the notes',
          multitaskStrategy: 'enqueue',
          attachments: [{ type: 'file', name: 'notes.txt', mediaType: 'text/plain', data: notes }],
        })
        .expect(202);
    },
  );
}

/**
 * (i) A fork (POST .../fork at the parent's second run) that ran once and was then compacted: saved with
 * `forkedFrom`, `transcriptEpoch` 1 and run records carrying `transcriptStart` and `transcriptEpoch`.
 */
function forked(outDir: string): Promise<string> {
  return produce(
    outDir,
    'default',
    'forked',
    { files: { 'project/hello.txt': 'hello\n' } },
    async ({ t, workspace, sessionId }) => {
      await request(t.url)
        .post('/v1/sessions')
        .send({ sessionId: 'fork-parent', workspace, autoSave: true })
        .expect(201);
      const parentRuns = '/v1/sessions/fork-parent/runs';
      t.fake.script({ text: 'One.' }, { text: 'Two.' });
      await request(t.url).post(parentRuns).send({ input: 'Say one', wait: true }).expect(200);
      const second = await request(t.url).post(parentRuns).send({ input: 'Say two', wait: true }).expect(200);
      await request(t.url)
        .post('/v1/sessions/fork-parent/fork')
        .send({ atRunId: second.body.runId, sessionId })
        .expect(201);
      // The fork has its parent's options: autoSave too.
      t.fake.script({ text: 'Three.' }, { text: 'They said one, then asked for three.' });
      await request(t.url).post(`/v1/sessions/${sessionId}/runs`).send({ input: 'Say three', wait: true }).expect(200);
      const compacted = await request(t.url).post(`/v1/sessions/${sessionId}/compact`).send().expect(200);
      if (compacted.body.compacted !== true) throw new Error(`not compacted: ${JSON.stringify(compacted.body)}`);
    },
  );
}

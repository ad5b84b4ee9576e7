import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/protocol/run-record.js';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { eventually, ofType, runEvents, startRun } from '../support/run-helpers.js';
import { pino } from 'pino';
import { CodeConfigSchema } from '../../src/config/code-config.js';
import { noSandbox } from '../../src/runtime/sandbox/start-sandbox.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { bash, changesOf } from './changes-helpers.js';
import { as, MINE, TOKENS } from './fork-copy-helpers.js';
import { revertWorkspace, treeOf } from './revert-helpers.js';

async function ended(t: TestServer, id: string, runId: string, token?: string): Promise<RunRecord> {
  let run: RunRecord | undefined;
  await eventually(async () => {
    const req = request(t.url).get(`/v1/sessions/${id}/runs/${runId}`);
    run = (await (token ? req.set(as(token)) : req).expect(200)).body.run as RunRecord;
    return ['completed', 'failed', 'cancelled'].includes(run.status);
  }, `run ${runId} to end`);
  return run!;
}

async function rollback(t: TestServer, id: string, input: string, token?: string): Promise<string> {
  const req = request(t.url).post(`/v1/sessions/${id}/runs`);
  const res = await (token ? req.set(as(token)) : req).send({ input, multitaskStrategy: 'rollback' }).expect(202);
  return res.body.runId as string;
}

describe.skipIf(!bwrapWorks())('multitaskStrategy rollback reverts the files of the run it cancels', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('the cancelled run wrote, added and deleted files: all back as before it, said in the event and the record', async () => {
    const { ws, id } = await revertWorkspace(t, 'rb', { 'a.txt': 'a0\n', 'gone.txt': 'g\n' });
    t.fake.script(
      { toolCalls: [bash('w1', 'echo a1 > a.txt && echo n > new.txt && rm gone.txt')] },
      { hang: true },
      { text: 'fresh' },
    );
    const doomed = await startRun(t, id, 'write things');
    await t.fake.waitForRequests(2);
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('a1\n');
    const next = await rollback(t, id, 'start over');
    const rolled = await ended(t, id, doomed);
    expect(rolled).toMatchObject({
      status: 'cancelled',
      metadata: { rolled_back_by: next, rolled_back_files: { status: 'restored', files: 3 } },
    });
    expect((await ended(t, id, next)).result?.text).toBe('fresh');
    t.fake.assertDone();
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('a0\n');
    expect(readFileSync(join(ws, 'gone.txt'), 'utf8')).toBe('g\n');
    expect(existsSync(join(ws, 'new.txt'))).toBe(false);
    const events = await runEvents(t, id, doomed);
    expect(ofType(events, 'run_files_rolled_back')[0]!.payload).toEqual({
      by_run_id: next,
      status: 'restored',
      files: 3,
    });
    // Before the run's end: its agent_end comes after.
    const types = events.map((event) => event.type);
    expect(types.indexOf('run_files_rolled_back')).toBeLessThan(types.indexOf('agent_end'));
    // A copy fork passes over the rolled-back run (its files went back): at it, its base; after it, no run left files.
    const at = await request(t.url).post(`/v1/sessions/${id}/fork`).send({ atRunId: doomed, workspace: 'copy' });
    expect(at.status).toBe(201);
    expect(readFileSync(join(at.body.session.workspace as string, 'a.txt'), 'utf8')).toBe('a0\n');
    const after = await request(t.url).post(`/v1/sessions/${id}/fork`).send({ workspace: 'copy' }).expect(409);
    expect(after.body.error).toMatchObject({ code: 'FORK_TREE_UNAVAILABLE', details: { reason: 'nothing_captured' } });
  });

  // Someone else (a person, another session on the directory) edits the workspace while the run is cancelled-to-be:
  // its change set holds their edit too, so a restore to the run's base would overwrite it. It never does.
  const edits: Array<[string, (ws: string) => void, string]> = [
    [
      'a file the run changed, changed again by someone else',
      (ws) => appendFileSync(join(ws, 'a.txt'), 'theirs\n'),
      'a.txt',
    ],
    [
      'a file the run never touched, edited by someone else',
      (ws) => writeFileSync(join(ws, 'b.txt'), 'b edited\n'),
      'b.txt',
    ],
    ['a file the run never touched, deleted by someone else', (ws) => rmSync(join(ws, 'c.txt')), 'c.txt'],
  ];
  for (const [what, edit, path] of edits)
    it(`${what} meanwhile: a conflict naming it, and nothing is written`, async () => {
      const name = `rb-${path[0]}`;
      const { ws, id } = await revertWorkspace(t, name, { 'a.txt': 'a0\n', 'b.txt': 'b0\n', 'c.txt': 'c0\n' });
      t.fake.script(
        { toolCalls: [bash('w1', 'echo a1 > a.txt && echo n > new.txt')] },
        { hang: true },
        { text: 'fresh' },
      );
      const doomed = await startRun(t, id, 'write things');
      await t.fake.waitForRequests(t.fake.requests.length + 2);
      // The run's call has ended (the model is thinking): the other edit comes after it.
      await new Promise((resolve) => setTimeout(resolve, 150));
      edit(ws);
      const theirs = treeOf(ws);
      const next = await rollback(t, id, 'start over');
      const rolled = await ended(t, id, doomed);
      expect(rolled.metadata?.rolled_back_files).toMatchObject({ status: 'conflict', files: 0, paths: [path] });
      expect((await ended(t, id, next)).result?.text).toBe('fresh');
      // Their edit is there, and so is the run's: nothing was written.
      expect(treeOf(ws)).toEqual(theirs);
      expect(readFileSync(join(ws, 'new.txt'), 'utf8')).toBe('n\n');
      const events = await runEvents(t, id, doomed);
      expect(ofType(events, 'run_files_rolled_back')[0]!.payload).toMatchObject({
        by_run_id: next,
        status: 'conflict',
        files: 0,
        paths: [path],
      });
      // The change set holds both (the run's files and theirs): an explicit revert of it is the person's decision.
      const changes = await changesOf(t, id, doomed);
      expect(changes.files.map((file) => file.path)).toContain(path);
      expect(changes.files.map((file) => file.path)).toContain('new.txt');
    });

  it('a run that changed no file: unchanged, and nothing is written', async () => {
    const { ws, id } = await revertWorkspace(t, 'rb-quiet', { 'a.txt': 'a0\n' });
    t.fake.script({ toolCalls: [{ id: 'r1', name: 'ls', arguments: {} }] }, { hang: true }, { text: 'again' });
    const quiet = await startRun(t, id, 'look');
    await t.fake.waitForRequests(t.fake.requests.length + 2);
    const after = await rollback(t, id, 'again');
    expect((await ended(t, id, quiet)).metadata).toMatchObject({
      rolled_back_files: { status: 'unchanged', files: 0 },
    });
    await ended(t, id, after);
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('a0\n');
  });
});

describe('rollback without a change set says so', () => {
  let server: RunningServer;
  let fake: FakeProvider;
  let root = '';
  beforeAll(async () => {
    fake = await startFakeProvider();
    root = tempDir('a3s-ws-');
    const config = CodeConfigSchema.parse({
      defaultModel: 'openai/test-model',
      providers: { openai: { apiKey: 'sk-test', baseUrl: fake.baseUrl, maxRetries: 0 } },
      dataDir: tempDir('a3s-data-'),
      host: '127.0.0.1',
      port: 0,
      workspaceRoots: [root],
      logLevel: 'silent',
      // A sessions-only token: without host_direct and without a sandbox, the session's commands are refused.
      apiTokens: TOKENS,
      sandbox: { mode: 'auto' },
      defaultPermissionPolicy: { enabled: false },
    });
    server = await startServer(config, { logger: pino({ level: 'silent' }), sandbox: await noSandbox(config) });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  it('no sandbox and no host commands: no capture, so the event says no_change_set and the file stays', async () => {
    const t = { url: server.url } as TestServer;
    const id = (await request(server.url).post('/v1/sessions').set(as(MINE)).send({}).expect(201)).body.session
      .id as string;
    fake.script(
      { toolCalls: [{ id: 'w1', name: 'write', arguments: { file_path: 'kept.txt', content: 'written\n' } }] },
      { hang: true },
      { text: 'fresh' },
    );
    const doomed = (
      await request(server.url).post(`/v1/sessions/${id}/runs`).set(as(MINE)).send({ input: 'write' }).expect(202)
    ).body.runId as string;
    await fake.waitForRequests(2);
    const next = await rollback(t, id, 'over', MINE);
    const rolled = await ended(t, id, doomed, MINE);
    expect(rolled.metadata).toMatchObject({
      rolled_back_by: next,
      rolled_back_files: { status: 'no_change_set', files: 0, reason: 'commands_refused' },
    });
    const events = (await request(server.url).get(`/v1/sessions/${id}/runs/${doomed}/events`).set(as(MINE)).expect(200))
      .body.events as Array<{ type: string; payload: Record<string, unknown> }>;
    expect(ofType(events as never, 'run_files_rolled_back')[0]!.payload).toMatchObject({
      by_run_id: next,
      status: 'no_change_set',
      reason: 'commands_refused',
    });
    expect(String(ofType(events as never, 'run_files_rolled_back')[0]!.payload.message)).toContain('not reverted');
    await ended(t, id, next, MINE);
    // Tokens of two tenants: the default workspace is the tenant's own directory.
    expect(readFileSync(join(root, 'team-a', 'kept.txt'), 'utf8')).toBe('written\n');
  });
});

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { listening, startMain, type MainProcess } from '../support/main-process.js';
import { tempDir } from '../support/test-server.js';
import { redisServerEnv } from '../support/redis-target.js';

/** The environment of a server process talking to the fake provider on a random port. */
function nodeEnv(fake: FakeProvider, extra: Record<string, string>): Record<string, string> {
  return {
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: fake.baseUrl,
    A3S_MODEL: 'openai/test-model',
    A3S_PORT: '0',
    ...extra,
  };
}

describe('the server process', () => {
  const procs: MainProcess[] = [];
  let fake: FakeProvider | undefined;
  afterEach(async () => {
    for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await fake?.close();
    fake = undefined;
  });

  it('fails at start listing every config problem with file and line', async () => {
    const dir = tempDir('a3s-cfg-');
    const file = join(dir, 'bad.hcl');
    writeFileSync(file, 'default_model = "gpt-4o"\nport = "eighty"\nbogus_key = 1\n');
    const proc = startMain({ A3S_CONFIG: file });
    procs.push(proc);
    expect(await proc.exited).toBe(2);
    expect(proc.stderr).toContain(`${file}:1`);
    expect(proc.stderr).toContain('defaultModel');
    expect(proc.stderr).toContain(`${file}:2`);
    expect(proc.stderr).toContain('port');
    expect(proc.stderr).toContain('bogus_key');
  });

  it('refuses a non-loopback bind without tokens', async () => {
    const proc = startMain({ A3S_HOST: '0.0.0.0', A3S_PORT: '0', A3S_DATA_DIR: tempDir() });
    procs.push(proc);
    expect(await proc.exited).toBe(1);
    expect(proc.stderr).toContain('without API tokens');
  });

  it('a run killed with SIGKILL after a checkpoint is resumed by a fresh process without re-running a tool round', async () => {
    fake = await startFakeProvider();
    const dataDir = tempDir('a3s-data-');
    const root = tempDir('a3s-ws-');
    const env = nodeEnv(fake, { A3S_DATA_DIR: dataDir, A3S_WORKSPACE_ROOTS: root });
    const first = startMain(env);
    procs.push(first);
    const url = await listening(first);
    const policy = { enabled: false };
    await request(url)
      .post('/v1/sessions')
      .send({ sessionId: 'crashy', autoSave: true, permissionPolicy: policy })
      .expect(201);
    fake.script(
      { toolCalls: [{ id: 'r1', name: 'bash', arguments: { command: 'echo one >> log.txt' } }] },
      { toolCalls: [{ id: 'r2', name: 'bash', arguments: { command: 'echo two >> log.txt' } }] },
      { hang: true },
    );
    const started = await request(url).post('/v1/sessions/crashy/runs').send({ input: 'write the log' }).expect(202);
    await fake.waitForRequests(3, 20_000);
    // The checkpoint after round 2 is written before the third provider call starts.
    first.child.kill('SIGKILL');
    await first.exited;

    const second = startMain(env);
    procs.push(second);
    const url2 = await listening(second);
    fake.script({ text: 'resumed and finished' });
    const resumed = await request(url2)
      .post(`/v1/sessions/crashy/runs/${started.body.runId}/resume`)
      .set('Idempotency-Key', 'resume-1')
      .send({ wait: true })
      .expect(200);
    expect(resumed.body.runId).not.toBe(started.body.runId);
    expect(resumed.body.run.metadata).toMatchObject({ resumed_from_run_id: started.body.runId, resumed_from_turn: 2 });
    expect(resumed.body.result.text).toBe('resumed and finished');
    expect(resumed.body.result.toolCallsCount).toBe(2);
    const log = await request(url2)
      .post('/v1/sessions/crashy/tools/read')
      .send({ args: { file_path: 'log.txt' } })
      .expect(200);
    expect(log.body.output).toMatch(/one\n.*two/s);
    expect(log.body.output.match(/one/g)).toHaveLength(1);
    expect(log.body.output.match(/two/g)).toHaveLength(1);
    const resumeRequest = fake.requests.at(-1)?.body.messages ?? [];
    expect(resumeRequest.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(['r1', 'r2']);
    const history = (await request(url2).get('/v1/sessions/crashy/history').expect(200)).body.messages;
    expect(history.map((m: { role: string }) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    // The checkpoint is gone once the resumed run ended: a second resume finds nothing.
    const again = await request(url2)
      .post(`/v1/sessions/crashy/runs/${started.body.runId}/resume`)
      .send({})
      .expect(404);
    expect(again.body.error.code).toBe('CHECKPOINT_NOT_FOUND');
    // A retried resume with the same Idempotency-Key answers with the run it started, checkpoint or not.
    const retried = await request(url2)
      .post(`/v1/sessions/crashy/runs/${started.body.runId}/resume`)
      .set('Idempotency-Key', 'resume-1')
      .send({ wait: true })
      .expect(200);
    expect(retried.body).toMatchObject({
      runId: resumed.body.runId,
      existing: true,
      result: { text: 'resumed and finished' },
    });
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it('with REDIS_URL, node B resumes a run node A started, from the checkpoint in Redis (separate data dirs)', async () => {
    fake = await startFakeProvider();
    const root = tempDir('a3s-ws-');
    const prefix = `a3s-test-${Math.random().toString(36).slice(2)}:`;
    const configFile = join(tempDir('a3s-cfg-'), 'cluster.json');
    writeFileSync(configFile, JSON.stringify({ cluster: { leaseTtlMs: 1000, nodeTtlMs: 1000 } }));
    const shared = nodeEnv(fake, {
      A3S_WORKSPACE_ROOTS: root,
      ...redisServerEnv(),
      A3S_REDIS_KEY_PREFIX: prefix,
      A3S_CONFIG: configFile,
    });
    const nodeA = startMain({ ...shared, A3S_DATA_DIR: tempDir('a3s-a-') });
    procs.push(nodeA);
    const urlA = await listening(nodeA);
    await request(urlA)
      .post('/v1/sessions')
      .send({ sessionId: 'shared', autoSave: true, permissionPolicy: { enabled: false } })
      .expect(201);
    fake.script(
      { toolCalls: [{ id: 'x1', name: 'bash', arguments: { command: 'echo round >> rounds.txt' } }] },
      { hang: true },
    );
    const started = await request(urlA).post('/v1/sessions/shared/runs').send({ input: 'go' }).expect(202);
    await fake.waitForRequests(2, 20_000);
    nodeA.child.kill('SIGKILL');
    await nodeA.exited;

    const nodeB = startMain({ ...shared, A3S_DATA_DIR: tempDir('a3s-b-') });
    procs.push(nodeB);
    const urlB = await listening(nodeB);
    // Until A's lease expires (1 s here), B answers that the session is busy on A (its run was in flight).
    fake.script({ text: 'done on B' });
    let resumed = await request(urlB)
      .post(`/v1/sessions/shared/runs/${started.body.runId}/resume`)
      .send({ wait: true });
    for (let i = 0; i < 100 && resumed.status !== 200; i++) {
      expect(resumed.body.error.code).toMatch(/^(SESSION_BUSY|SESSION_OWNED_ELSEWHERE)$/);
      await new Promise((r) => setTimeout(r, 100));
      resumed = await request(urlB).post(`/v1/sessions/shared/runs/${started.body.runId}/resume`).send({ wait: true });
    }
    expect(resumed.status).toBe(200);
    expect(resumed.body.result.text).toBe('done on B');
    const rounds = await request(urlB)
      .post('/v1/sessions/shared/tools/read')
      .send({ args: { file_path: 'rounds.txt' } })
      .expect(200);
    expect(rounds.body.output.match(/round/g)).toHaveLength(1);
    nodeB.child.kill('SIGTERM');
    expect(await nodeB.exited).toBe(0);
  });

  it('persists with autoSave, shuts down on SIGTERM, and a fresh process resumes the session', async () => {
    fake = await startFakeProvider();
    const dataDir = tempDir('a3s-data-');
    const root = tempDir('a3s-ws-');
    const env = nodeEnv(fake, { A3S_DATA_DIR: dataDir, A3S_WORKSPACE_ROOTS: root });
    const first = startMain(env);
    procs.push(first);
    const url = await listening(first);
    await request(url).post('/v1/sessions').send({ sessionId: 'durable', autoSave: true }).expect(201);
    fake.script({ text: 'remembered' });
    await request(url).post('/v1/sessions/durable/runs').send({ input: 'remember this', wait: true }).expect(200);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const second = startMain(env);
    procs.push(second);
    const url2 = await listening(second);
    await request(url2).post('/v1/sessions').send({ sessionId: 'durable', resume: true }).expect(201);
    const history = (await request(url2).get('/v1/sessions/durable/history').expect(200)).body.messages;
    expect(history).toEqual([
      { role: 'user', content: 'remember this' },
      { role: 'assistant', content: 'remembered' },
    ]);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    fake.assertDone();
  });
});

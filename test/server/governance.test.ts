import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { subscribe } from '../support/ws-client.js';
import { toolMessage } from '../support/run-helpers.js';

async function pendingConfirmations(t: TestServer, id: string, count = 1) {
  for (let i = 0; i < 200; i++) {
    const list = (await request(t.url).get(`/v1/sessions/${id}/confirmations`).expect(200)).body.confirmations;
    if (list.length >= count) return list;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('no pending confirmation');
}

async function runEvents(t: TestServer, id: string, runId: string) {
  return (await request(t.url).get(`/v1/sessions/${id}/runs/${runId}/events?after=-1&limit=1000`).expect(200)).body
    .events as { type: string; payload: Record<string, unknown> }[];
}

describe('governance: permission policy, confirmation, origins, sanitisation', () => {
  let t: TestServer;
  beforeAll(async () => {
    // The built-in default policy (no override): read-only tools allowed, everything else asks.
    t = await startTestServer({ files: { 'a.txt': 'hello\n' }, config: { defaultPermissionPolicy: undefined } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('the built-in default allows read and denies an asking bash when confirmation is disabled, naming rule and options', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    t.fake.script(
      {
        toolCalls: [
          { id: 'c_read', name: 'read', arguments: { file_path: 'a.txt' } },
          { id: 'c_bash', name: 'bash', arguments: { command: 'touch pwned' } },
        ],
      },
      { text: 'done' },
    );
    const run = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'go', wait: true }).expect(200);
    expect(run.body.run.status).toBe('completed');
    expect(toolMessage(t, 'c_read')).toContain('hello');
    const denied = toolMessage(t, 'c_bash');
    expect(denied).toContain('defaultDecision');
    expect(denied).toContain('confirmationPolicy.enabled is false');
    expect(denied).toContain('permissionPolicy.allow');
    const events = await runEvents(t, id, run.body.runId);
    expect(events.find((e) => e.type === 'permission_denied')?.payload).toMatchObject({
      tool_id: 'c_bash',
      tool_name: 'bash',
      args: { command: expect.any(String) },
      rule: 'defaultDecision',
    });
    expect(events.some((e) => e.type === 'tool_execution_start' && e.payload.id === 'c_bash')).toBe(false);
    const ls = await request(t.url).post(`/v1/sessions/${id}/tools/ls`).send({ args: {} }).expect(200);
    expect(ls.body.output).not.toContain('pwned');
    t.fake.assertDone();
  });

  it('hides tools denied for every argument and enforces deny rules with patterns', async () => {
    const id = (
      await request(t.url)
        .post('/v1/sessions')
        .send({ permissionPolicy: { deny: ['bash', 'write(**/.env*)'], allow: ['write', 'read'] } })
        .expect(201)
    ).body.session.id;
    t.fake.script(
      {
        toolCalls: [
          { id: 'c_env', name: 'write', arguments: { file_path: 'config/.env', content: 'X=1' } },
          { id: 'c_ok', name: 'write', arguments: { file_path: 'ok.txt', content: 'fine' } },
          { id: 'c_sh', name: 'bash', arguments: { command: 'echo hi' } },
        ],
      },
      { text: 'done' },
    );
    await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'go', wait: true }).expect(200);
    const offered = (t.fake.requests.at(-2)?.body.tools ?? []) as { function: { name: string } }[];
    expect(offered.map((x) => x.function.name)).not.toContain('bash');
    expect(offered.map((x) => x.function.name)).toContain('write');
    expect(toolMessage(t, 'c_env')).toContain('write(**/.env*)');
    expect(toolMessage(t, 'c_ok')).toContain('Wrote');
    expect(toolMessage(t, 'c_sh')).toContain('denied by permission rule "bash"');
    t.fake.assertDone();
  });

  it('rejects malformed policy rules naming the field', async () => {
    const bad = await request(t.url)
      .post('/v1/sessions')
      .send({ permissionPolicy: { deny: ['ok', 'bad rule(('] } })
      .expect(400);
    expect(bad.body.error.code).toBe('SESSION_CONFIGURATION_ERROR');
    expect(bad.body.error.message).toContain('permissionPolicy.deny[1]');
    const badField = await request(t.url)
      .post('/v1/sessions')
      .send({ confirmationPolicy: { timeoutAction: 'maybe' } })
      .expect(400);
    expect(badField.body.error.message).toContain('body.confirmationPolicy.timeoutAction');
  });

  it('asks a human: approve runs the exact call once; a second answer is 409, an unknown id 404', async () => {
    const id = (
      await request(t.url)
        .post('/v1/sessions')
        .send({ confirmationPolicy: { enabled: true, defaultTimeoutMs: 20_000 } })
        .expect(201)
    ).body.session.id;
    t.fake.script(
      { toolCalls: [{ id: 'c_w', name: 'write', arguments: { file_path: 'approved.txt', content: 'yes' } }] },
      { text: 'written' },
    );
    const started = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'write it' }).expect(202);
    const [pending] = await pendingConfirmations(t, id);
    expect(pending).toMatchObject({
      toolId: 'c_w',
      toolName: 'write',
      args: { file_path: 'approved.txt', content: 'yes' },
      runId: started.body.runId,
    });
    expect(pending.remainingMs).toBeGreaterThan(0);
    const mismatch = await request(t.url)
      .post(`/v1/sessions/${id}/confirmations/c_w`)
      .send({ approved: true, argsDigest: '0'.repeat(64) })
      .expect(409);
    expect(mismatch.body.error.code).toBe('CONFIRMATION_MISMATCH');
    await request(t.url)
      .post(`/v1/sessions/${id}/confirmations/c_w`)
      .send({ approved: true, argsDigest: pending.argsDigest })
      .expect(200);
    const again = await request(t.url)
      .post(`/v1/sessions/${id}/confirmations/c_w`)
      .send({ approved: true })
      .expect(409);
    expect(again.body.error.code).toBe('CONFIRMATION_SETTLED');
    const unknown = await request(t.url)
      .post(`/v1/sessions/${id}/confirmations/nope`)
      .send({ approved: true })
      .expect(404);
    expect(unknown.body.error.code).toBe('CONFIRMATION_NOT_FOUND');
    const run = await waitRun(t, id, started.body.runId);
    expect(run.status).toBe('completed');
    expect(toolMessage(t, 'c_w')).toContain('Wrote');
    const events = await runEvents(t, id, started.body.runId);
    expect(events.find((e) => e.type === 'confirmation_required')?.payload).toMatchObject({
      tool_id: 'c_w',
      tool_name: 'write',
      timeout_ms: 20_000,
      args_digest: pending.argsDigest,
    });
    expect(events.find((e) => e.type === 'confirmation_received')?.payload).toMatchObject({
      tool_id: 'c_w',
      approved: true,
    });
    t.fake.assertDone();
  });

  it('a WebSocket client answers a confirmation with the confirm message', async () => {
    const id = (
      await request(t.url)
        .post('/v1/sessions')
        .send({ confirmationPolicy: { enabled: true } })
        .expect(201)
    ).body.session.id;
    const ws = await subscribe(t.url, id, { after: 0 });
    t.fake.script(
      { toolCalls: [{ id: 'c_ws', name: 'write', arguments: { file_path: 'ws.txt', content: 'via ws' } }] },
      { text: 'ok' },
    );
    const started = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'x' }).expect(202);
    const required = await ws.waitFor((e) => e.type === 'confirmation_required');
    expect(required.payload).toMatchObject({
      tool_id: 'c_ws',
      tool_name: 'write',
      args: { file_path: 'ws.txt', content: 'via ws' },
      timeout_ms: 30_000,
    });
    ws.send({ type: 'confirm', toolId: 'c_ws', approved: true, argsDigest: required.payload.args_digest });
    await ws.waitFor((e) => e.type === 'confirm_result');
    await ws.waitFor((e) => e.type === 'confirmation_received');
    ws.send({ type: 'confirm', toolId: 'c_ws', approved: true });
    const settled = await ws.waitFor((e) => e.type === 'error');
    expect(settled.payload).toMatchObject({ code: 'CONFIRMATION_SETTLED' });
    expect((await waitRun(t, id, started.body.runId)).status).toBe('completed');
    expect(toolMessage(t, 'c_ws')).toContain('Wrote');
    ws.close();
    t.fake.assertDone();
  });

  it('a rejection becomes an error result the model sees', async () => {
    const id = (
      await request(t.url)
        .post('/v1/sessions')
        .send({ confirmationPolicy: { enabled: true } })
        .expect(201)
    ).body.session.id;
    t.fake.script({ toolCalls: [{ id: 'c_rej', name: 'bash', arguments: { command: 'echo no' } }] }, { text: 'ok' });
    const started = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'x' }).expect(202);
    await pendingConfirmations(t, id);
    await request(t.url)
      .post(`/v1/sessions/${id}/confirmations/c_rej`)
      .send({ approved: false, reason: 'not today' })
      .expect(200);
    await waitRun(t, id, started.body.runId);
    expect(toolMessage(t, 'c_rej')).toContain('rejected: not today');
    t.fake.assertDone();
  });

  it('timeouts follow timeoutAction: reject and auto_approve', async () => {
    const rejectId = (
      await request(t.url)
        .post('/v1/sessions')
        .send({ confirmationPolicy: { enabled: true, defaultTimeoutMs: 100, timeoutAction: 'reject' } })
        .expect(201)
    ).body.session.id;
    t.fake.script(
      { toolCalls: [{ id: 'c_to1', name: 'write', arguments: { file_path: 'r.txt', content: 'r' } }] },
      { text: 'ok' },
    );
    const r1 = await request(t.url).post(`/v1/sessions/${rejectId}/runs`).send({ input: 'x', wait: true }).expect(200);
    expect(toolMessage(t, 'c_to1')).toContain('no confirmation within 100 ms');
    expect(
      (await runEvents(t, rejectId, r1.body.runId)).find((e) => e.type === 'confirmation_timeout')?.payload,
    ).toMatchObject({ tool_id: 'c_to1', action_taken: 'rejected' });

    const autoId = (
      await request(t.url)
        .post('/v1/sessions')
        .send({ confirmationPolicy: { enabled: true, defaultTimeoutMs: 100, timeoutAction: 'auto_approve' } })
        .expect(201)
    ).body.session.id;
    t.fake.script(
      { toolCalls: [{ id: 'c_to2', name: 'write', arguments: { file_path: 'auto.txt', content: 'a' } }] },
      { text: 'ok' },
    );
    const r2 = await request(t.url).post(`/v1/sessions/${autoId}/runs`).send({ input: 'x', wait: true }).expect(200);
    expect(toolMessage(t, 'c_to2')).toContain('Wrote');
    expect(
      (await runEvents(t, autoId, r2.body.runId)).find((e) => e.type === 'confirmation_timeout')?.payload,
    ).toMatchObject({ action_taken: 'auto_approved' });
    t.fake.assertDone();
  });

  it('cancel and close reject pending confirmations', async () => {
    const id = (
      await request(t.url)
        .post('/v1/sessions')
        .send({ confirmationPolicy: { enabled: true } })
        .expect(201)
    ).body.session.id;
    t.fake.script({ toolCalls: [{ id: 'c_can', name: 'write', arguments: { file_path: 'c.txt', content: 'c' } }] });
    const started = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'x' }).expect(202);
    await pendingConfirmations(t, id);
    await request(t.url).post(`/v1/sessions/${id}/runs/${started.body.runId}/cancel`).expect(200);
    const run = await waitRun(t, id, started.body.runId);
    expect(run.status).toBe('cancelled');
    expect((await request(t.url).get(`/v1/sessions/${id}/confirmations`).expect(200)).body.confirmations).toEqual([]);
    await request(t.url).post(`/v1/sessions/${id}/confirmations/c_can`).send({ approved: true }).expect(409);

    const id2 = (
      await request(t.url)
        .post('/v1/sessions')
        .send({ confirmationPolicy: { enabled: true } })
        .expect(201)
    ).body.session.id;
    t.fake.script({ toolCalls: [{ id: 'c_close', name: 'write', arguments: { file_path: 'd.txt', content: 'd' } }] });
    await request(t.url).post(`/v1/sessions/${id2}/runs`).send({ input: 'x' }).expect(202);
    await pendingConfirmations(t, id2);
    await request(t.url).delete(`/v1/sessions/${id2}`).expect(200);
    t.fake.assertDone();
  });

  it('host-direct skips permission and confirmation; governed direct applies them', async () => {
    const id = (
      await request(t.url)
        .post('/v1/sessions')
        .send({ permissionPolicy: { deny: ['bash(rm*)'], allow: ['read'], defaultDecision: 'ask' } })
        .expect(201)
    ).body.session.id;
    const direct = await request(t.url)
      .post(`/v1/sessions/${id}/tools/bash`)
      .send({ args: { command: 'echo direct' } })
      .expect(200);
    expect(direct.body).toMatchObject({ exitCode: 0 });
    const governed = await request(t.url)
      .post(`/v1/sessions/${id}/tools/bash/governed`)
      .send({ args: { command: 'echo governed' } })
      .expect(200);
    expect(governed.body.exitCode).toBe(1);
    expect(governed.body.output).toContain('confirmationPolicy.enabled is false');
    const denied = await request(t.url)
      .post(`/v1/sessions/${id}/tools/bash/governed`)
      .send({ args: { command: 'rm -rf x' } })
      .expect(200);
    expect(denied.body.output).toContain('bash(rm*)');
    const read = await request(t.url)
      .post(`/v1/sessions/${id}/tools/read/governed`)
      .send({ args: { file_path: 'a.txt' } })
      .expect(200);
    expect(read.body.exitCode).toBe(0);
  });

  it('the docs/governance.md CI-bot policy allows build and test commands and denies pushes, deletes and .env writes', async () => {
    const readme = readFileSync(join(process.cwd(), 'docs', 'governance.md'), 'utf8');
    const block = /```json\n(\{\n {2}"permissionPolicy"[\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const id = (
      await request(t.url)
        .post('/v1/sessions')
        .send(JSON.parse(block ?? '{}'))
        .expect(201)
    ).body.session.id;
    const governed = async (tool: string, args: Record<string, unknown>) =>
      (await request(t.url).post(`/v1/sessions/${id}/tools/${tool}/governed`).send({ args }).expect(200)).body as {
        output: string;
        exitCode: number;
      };
    expect((await governed('bash', { command: 'git push origin main' })).output).toContain('bash(git push:*)');
    expect((await governed('bash', { command: 'rm -rf src' })).output).toContain('bash(rm -rf:*)');
    expect((await governed('write', { file_path: '.env', content: 'X=1' })).output).toContain('write(**/.env*)');
    expect((await governed('bash', { command: 'curl example.com' })).output).toContain('defaultDecision');
    expect((await governed('read', { file_path: 'a.txt' })).exitCode).toBe(0);
    expect((await governed('write', { file_path: 'src/new.ts', content: 'export {};' })).exitCode).toBe(0);
    expect((await governed('bash', { command: 'npm test -- --version' })).output).not.toContain('denied');
  });

  it('a model cannot reach an ungoverned call through batch: children of a model-owned batch are governed again', async () => {
    const id = (
      await request(t.url)
        .post('/v1/sessions')
        .send({ permissionPolicy: { allow: ['batch', 'read'], defaultDecision: 'deny' } })
        .expect(201)
    ).body.session.id;
    t.fake.script(
      {
        toolCalls: [
          {
            id: 'mb',
            name: 'batch',
            arguments: {
              invocations: [
                { id: 'sh', tool: 'bash', args: { command: 'touch escaped' } },
                { id: 'rd', tool: 'read', args: { file_path: 'a.txt' } },
                {
                  id: 'nest',
                  tool: 'batch',
                  args: { invocations: [{ id: 'x', tool: 'bash', args: { command: 'touch nested' } }] },
                },
              ],
            },
          },
        ],
      },
      { text: 'done' },
    );
    const run = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'go', wait: true }).expect(200);
    const out = toolMessage(t, 'mb');
    expect(out).toContain('defaultDecision');
    expect(out).toContain('hello');
    expect(out).toContain('recursive batch calls are not allowed');
    const evs = await runEvents(t, id, run.body.runId);
    const child = evs.find((e) => e.type === 'tool_execution_start' && e.payload.name === 'read');
    expect(child?.payload).toMatchObject({ origin: 'nested', parent_tool_id: 'mb' });
    expect(evs.some((e) => e.type === 'permission_denied' && e.payload.tool_name === 'bash')).toBe(true);
    const ls = await request(t.url).post(`/v1/sessions/${id}/tools/ls`).send({ args: {} }).expect(200);
    expect(ls.body.output).not.toContain('escaped');
    expect(ls.body.output).not.toContain('nested');
    // Governed direct batch: the children are governed too.
    const governed = await request(t.url)
      .post(`/v1/sessions/${id}/tools/batch/governed`)
      .send({ args: { invocations: [{ id: 'g', tool: 'bash', args: { command: 'touch governed' } }] } })
      .expect(200);
    expect(governed.body.output).toContain('defaultDecision');
    // Only an explicit host-direct batch makes its children trusted.
    const host = await request(t.url)
      .post(`/v1/sessions/${id}/tools/batch`)
      .send({ args: { invocations: [{ id: 'h', tool: 'bash', args: { command: 'echo trusted-child' } }] } })
      .expect(200);
    expect(host.body.exitCode).toBe(0);
    expect(host.body.output).toContain('trusted-child');
    t.fake.assertDone();
  });

  it('redacts secrets from tool output before the model or the host sees them', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    const secret = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';
    const out = await request(t.url)
      .post(`/v1/sessions/${id}/tools/bash`)
      .send({ args: { command: `echo "key=${secret}"; echo "Authorization: Bearer abcdefghijklmnop1234"` } })
      .expect(200);
    expect(out.body.output).not.toContain(secret);
    expect(out.body.output).not.toContain('abcdefghijklmnop1234');
    expect(out.body.output).toContain('[REDACTED]');
    expect(out.body.metadata.redacted_secrets).toBe(2);
  });
});

async function waitRun(t: TestServer, id: string, runId: string) {
  for (let i = 0; i < 400; i++) {
    const run = (await request(t.url).get(`/v1/sessions/${id}/runs/${runId}`).expect(200)).body.run;
    if (['completed', 'failed', 'cancelled'].includes(run.status)) return run;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('run did not finish');
}

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { toolMessage } from '../support/run-helpers.js';

describe('bash permission rules over HTTP see each command of a compound', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ files: { 'notes.txt': 'hello\n' }, config: { defaultPermissionPolicy: undefined } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('allow bash(echo *) runs echo but not "echo hi; touch pwned", which is asked and (confirmation off) refused', async () => {
    const created = await request(t.url)
      .post('/v1/sessions')
      .send({ permissionPolicy: { allow: ['bash(echo *)'] } })
      .expect(201);
    const id = created.body.session.id as string;
    const workspace = (created.body.session.workspace as string | undefined) ?? t.root;
    t.fake.script(
      {
        toolCalls: [
          { id: 'c_ok', name: 'bash', arguments: { command: 'echo allowed-output > out.txt' } },
          { id: 'c_semi', name: 'bash', arguments: { command: 'echo hi; touch pwned' } },
          { id: 'c_subst', name: 'bash', arguments: { command: 'echo $(echo hi > pwned2)' } },
          { id: 'c_etc', name: 'bash', arguments: { command: 'echo hi > ../escaped.txt' } },
        ],
      },
      { text: 'done' },
    );
    const run = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'go', wait: true }).expect(200);
    expect(run.body.run.status).toBe('completed');
    expect(readFileSync(join(workspace, 'out.txt'), 'utf8')).toBe('allowed-output\n');
    expect(toolMessage(t, 'c_semi')).toContain('defaultDecision');
    expect(toolMessage(t, 'c_semi')).toContain('confirmationPolicy.enabled is false');
    expect(toolMessage(t, 'c_subst')).toContain('command substitution');
    expect(toolMessage(t, 'c_etc')).toContain('outside the workspace');
    expect(existsSync(join(workspace, 'pwned'))).toBe(false);
    expect(existsSync(join(workspace, 'pwned2'))).toBe(false);
    expect(existsSync(join(workspace, '..', 'escaped.txt'))).toBe(false);
    t.fake.assertDone();
  });

  it('with confirmation on, the compound waits for a human and a rejection leaves nothing behind', async () => {
    const created = await request(t.url)
      .post('/v1/sessions')
      .send({
        permissionPolicy: { allow: ['bash(echo *)'] },
        confirmationPolicy: { enabled: true, defaultTimeoutMs: 20_000 },
      })
      .expect(201);
    const id = created.body.session.id as string;
    const workspace = (created.body.session.workspace as string | undefined) ?? t.root;
    t.fake.script(
      { toolCalls: [{ id: 'c_ask', name: 'bash', arguments: { command: 'echo hi && touch pwned3' } }] },
      { text: 'done' },
    );
    const started = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'go' }).expect(202);
    let pending: { toolId?: string; tool_id?: string }[] = [];
    for (let i = 0; i < 200 && pending.length === 0; i++) {
      pending = (await request(t.url).get(`/v1/sessions/${id}/confirmations`).expect(200)).body.confirmations;
      if (pending.length === 0) await new Promise((r) => setTimeout(r, 20));
    }
    expect(pending).toHaveLength(1);
    await request(t.url)
      .post(`/v1/sessions/${id}/confirmations/c_ask`)
      .send({ approved: false, reason: 'no' })
      .expect(200);
    for (let i = 0; i < 200; i++) {
      const status = (await request(t.url).get(`/v1/sessions/${id}/runs/${started.body.runId}`).expect(200)).body.run
        ?.status;
      if (status === 'completed') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(existsSync(join(workspace, 'pwned3'))).toBe(false);
    t.fake.assertDone();
  });

  it('program ctx.bash goes through the same per-command rules', async () => {
    const created = await request(t.url)
      .post('/v1/sessions')
      .send({ permissionPolicy: { allow: ['program', 'bash(echo *)'], defaultDecision: 'deny' } })
      .expect(201);
    const id = created.body.session.id as string;
    const workspace = (created.body.session.workspace as string | undefined) ?? t.root;
    const source = `async function run(ctx) { const ok = await ctx.tool('bash', { command: 'echo inner-ok' }); const bad = await ctx.tool('bash', { command: 'echo hi; touch pwned4' }); return { ok: ok.exitCode, okOut: ok.output, bad: bad.exitCode, badOut: bad.output }; }`;
    t.fake.script(
      { toolCalls: [{ id: 'c_prog', name: 'program', arguments: { type: 'script', source } }] },
      { text: 'done' },
    );
    await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'go', wait: true }).expect(200);
    const content = toolMessage(t, 'c_prog');
    expect(content).toContain('"ok": 0');
    expect(content).toContain('inner-ok');
    expect(content).toContain('"bad": 1');
    expect(content).toContain('defaultDecision');
    expect(existsSync(join(workspace, 'pwned4'))).toBe(false);
    t.fake.assertDone();
  });
});

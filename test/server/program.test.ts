import { execFileSync } from 'node:child_process';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SEED_PROGRAM_BODY,
  SEED_PROGRAM_FILES,
  SEED_PROGRAM_RESULT,
  SEED_PROGRAM_TOOL_ORDER,
} from '../program/fixtures/seed-program-example.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const HOST = 'token-program-host-direct-01';
const PLAIN = 'token-program-sessions-only1';

describe('program over HTTP', () => {
  let t: TestServer;
  const as = (token: string) => ({ authorization: `Bearer ${token}` });
  const newSession = async (body: Record<string, unknown> = {}): Promise<string> =>
    (await request(t.url).post('/v1/sessions').set(as(HOST)).send(body).expect(201)).body.session.id as string;

  beforeAll(async () => {
    t = await startTestServer({
      files: SEED_PROGRAM_FILES,
      config: {
        apiTokens: [
          { token: HOST, principal: 'ci', tenantId: 't1', scopes: ['sessions', 'host_direct'] },
          { token: PLAIN, principal: 'web', tenantId: 't1', scopes: ['sessions'] },
        ],
      },
    });
    execFileSync('git', ['init', '-q'], { cwd: t.root });
  });
  afterAll(async () => {
    await t.close();
  });

  it("runs the seed's full example verbatim: every flag true, tool_calls in the seed's order", async () => {
    const id = await newSession();
    const out = await request(t.url)
      .post(`/v1/sessions/${id}/program`)
      .set(as(HOST))
      .send(SEED_PROGRAM_BODY)
      .expect(200);
    expect(out.body.exitCode, out.body.output).toBe(0);
    expect(out.body.metadata.script_result).toEqual(SEED_PROGRAM_RESULT);
    const program = out.body.metadata.program;
    expect(program).toMatchObject({
      name: 'script',
      language: 'javascript',
      runtime: 'embedded-quickjs',
      success: true,
    });
    const calls = program.tool_calls as {
      tool_name: string;
      success: boolean;
      exit_code: number;
      output_bytes: number;
    }[];
    expect(calls.map((c) => c.tool_name)).toEqual(SEED_PROGRAM_TOOL_ORDER);
    for (const call of calls)
      expect(call).toMatchObject({ success: true, exit_code: 0, output_bytes: expect.any(Number) });
    expect(calls[5].output_bytes).toBe(Buffer.byteLength('ptc-bash'));
    expect(
      out.body.output.startsWith(
        'Program script completed.\nok\n\nTool calls: 8\n1. read (ok, exit_code=0, output_bytes=',
      ),
    ).toBe(true);
    expect(out.body.output).toContain('6. bash (ok, exit_code=0, output_bytes=8)');
    expect(out.body.output).toContain('Result:\n{\n  "summary": "ok"');
  });

  it('needs the host_direct scope, and answers a bad body with 400 naming the field', async () => {
    const id = await newSession();
    const denied = await request(t.url)
      .post(`/v1/sessions/${id}/program`)
      .set(as(PLAIN))
      .send(SEED_PROGRAM_BODY)
      .expect(403);
    expect(denied.body.error).toMatchObject({ code: 'FORBIDDEN', details: { scope: 'host_direct' } });
    const both = await request(t.url)
      .post(`/v1/sessions/${id}/program`)
      .set(as(HOST))
      .send({ source: 'x', path: 'y.js' })
      .expect(400);
    expect(both.body.error.code).toBe('VALIDATION_ERROR');
    expect(both.body.error.message).toContain('give exactly one of source or path');
    const spellings = await request(t.url)
      .post(`/v1/sessions/${id}/program`)
      .set(as(HOST))
      .send({ source: 'function run() { return 1; }', allowedTools: ['read'], allowed_tools: ['read'] })
      .expect(400);
    expect(spellings.body.error.message).toContain('body.allowed_tools: give allowedTools or allowed_tools, not both');
    const limits = await request(t.url)
      .post(`/v1/sessions/${id}/program`)
      .set(as(HOST))
      .send({ source: 'function run() {}', limits: { timeoutMs: 0 } })
      .expect(400);
    expect(limits.body.error.message).toMatch(/^body\.limits\.timeoutMs: /);
    const python = await request(t.url)
      .post(`/v1/sessions/${id}/program`)
      .set(as(HOST))
      .send({ source: 'x', language: 'python' })
      .expect(400);
    expect(python.body.error.message).toMatch(/^body\.language: /);
  });

  it('accepts the tool spelling (type, language, allowed_tools) and sync or plain run functions', async () => {
    const id = await newSession();
    const plain = await request(t.url)
      .post(`/v1/sessions/${id}/program`)
      .set(as(HOST))
      .send({
        type: 'script',
        language: 'javascript',
        source: 'function run(ctx, inputs) { return inputs; }',
        allowed_tools: [],
      })
      .expect(200);
    expect(plain.body).toMatchObject({ exitCode: 0, metadata: { script_result: {} } });
    const exportedSync = await request(t.url)
      .post(`/v1/sessions/${id}/program`)
      .set(as(HOST))
      .send({ source: 'export default function run(ctx, inputs) { return inputs.n + 1; }', inputs: { n: 1 } })
      .expect(200);
    expect(exportedSync.body.metadata.script_result).toBe(2);
    const refused = await request(t.url)
      .post(`/v1/sessions/${id}/program`)
      .set(as(HOST))
      .send({ source: 'async function run(ctx) { return await ctx.bash("echo no"); }', allowedTools: ['read'] })
      .expect(200);
    expect(refused.body.exitCode).toBe(1);
    expect(refused.body.output).toContain(
      "program script error:\nError: tool 'bash' is not allowed for this PTC script; allowed tools: read",
    );
  });

  it('a model-owned program is governed: its inner calls face the policy, and recursion is refused', async () => {
    const id = await newSession({ permissionPolicy: { allow: ['program', 'read'], defaultDecision: 'deny' } });
    const source = `async function run(ctx) { const b = await ctx.tool('bash', { command: 'touch escaped' }); const r = await ctx.read('README.md'); const p = await ctx.tool('program', { type: 'script', source: 'function run(){return 1}' }).catch((e) => ({ output: String(e), exitCode: 1 })); return { bash: b.exitCode, bashOut: b.output, read: r.exitCode, program: p.output }; }`;
    t.fake.script(
      { toolCalls: [{ id: 'mp', name: 'program', arguments: { type: 'script', source } }] },
      { text: 'ok' },
    );
    await request(t.url).post(`/v1/sessions/${id}/runs`).set(as(HOST)).send({ input: 'go', wait: true }).expect(200);
    const toolMsg = (t.fake.requests.at(-1)?.body.messages ?? []).find(
      (m) => m.role === 'tool' && m.tool_call_id === 'mp',
    );
    const content = String(toolMsg?.content);
    expect(content).toContain('"bash": 1');
    expect(content).toContain('defaultDecision');
    expect(content).toContain('"read": 0');
    expect(content).toContain('recursive program calls are not allowed');
    const ls = await request(t.url).post(`/v1/sessions/${id}/tools/ls`).set(as(HOST)).send({ args: {} }).expect(200);
    expect(ls.body.output).not.toContain('escaped');
    t.fake.assertDone();
  });

  it('a model call without type is a tool error naming the field', async () => {
    const id = await newSession();
    t.fake.script(
      { toolCalls: [{ id: 'nt', name: 'program', arguments: { source: 'function run() { return 1; }' } }] },
      { text: 'ok' },
    );
    await request(t.url).post(`/v1/sessions/${id}/runs`).set(as(HOST)).send({ input: 'go', wait: true }).expect(200);
    const toolMsg = (t.fake.requests.at(-1)?.body.messages ?? []).find(
      (m) => m.role === 'tool' && m.tool_call_id === 'nt',
    );
    expect(String(toolMsg?.content)).toContain('type');
    t.fake.assertDone();
  });

  it('sandbox limits hold through the route: an endless loop times out with the seed message', async () => {
    const id = await newSession();
    const out = await request(t.url)
      .post(`/v1/sessions/${id}/program`)
      .set(as(HOST))
      .send({ source: 'function run(){ while(true){} }', limits: { timeoutMs: 300 } })
      .expect(200);
    expect(out.body.exitCode).toBe(1);
    expect(out.body.output).toBe('program script timed out after 300 ms');
    expect(out.body.metadata.program).toMatchObject({ success: false, failure: 'timeout' });
  });
});

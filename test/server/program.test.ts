import { execFileSync } from 'node:child_process';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';

const SEED_PROGRAM = `
async function run(ctx, inputs) {
  const readme = await ctx.readFile('README.md');
  const hits = await ctx.grep({ pattern: inputs.word, path: '.' });
  const echo = await ctx.bash({ command: 'echo from-bash' });
  const status = await ctx.git({ command: 'status' });
  const listing = await ctx.ls({});
  const again = await ctx.tool('grep', { pattern: 'A3S', path: 'README.md' });
  return { lines: readme.split('\\n').length, hits: hits.exitCode, echo: echo.output.trim(), git: status.exitCode, ls: listing.output.includes('README.md'), again: again.exitCode };
}`;

describe('program over HTTP', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ files: { 'README.md': '# A3S demo\nline two\nA3S again\n' } });
    execFileSync('git', ['init', '-q'], { cwd: t.root });
  });
  afterAll(async () => {
    await t.close();
  });

  it("runs the seed's program example host-direct and reports tool_calls in order", async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    const out = await request(t.url).post(`/v1/sessions/${id}/program`).send({ source: SEED_PROGRAM, inputs: { word: 'A3S' } }).expect(200);
    expect(out.body.exitCode, out.body.output).toBe(0);
    expect(out.body.metadata.script_result).toEqual({ lines: 3, hits: 0, echo: 'from-bash', git: 0, ls: true, again: 0 });
    const calls = out.body.metadata.program.tool_calls.map((c: { name: string }) => c.name);
    expect(calls[0]).toBe('read');
    expect(calls.slice(-5)).toEqual(['grep', 'bash', 'git', 'ls', 'grep']);
  });

  it('a model-owned program is governed: its inner calls face the policy, and recursion is refused', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({ permissionPolicy: { allow: ['program', 'read'], defaultDecision: 'deny' } }).expect(201)).body.session.id;
    const source = `async function run(ctx) { const b = await ctx.bash({ command: 'touch escaped' }); const r = await ctx.read({ file_path: 'README.md' }); const p = await ctx.tool('program', { source: 'function run(){return 1}' }).catch((e) => ({ output: String(e), exitCode: 1 })); return { bash: b.exitCode, bashOut: b.output, read: r.exitCode, program: p.output }; }`;
    t.fake.script({ toolCalls: [{ id: 'mp', name: 'program', arguments: { source } }] }, { text: 'ok' });
    await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'go', wait: true }).expect(200);
    const toolMsg = (t.fake.requests.at(-1)?.body.messages ?? []).find((m) => m.role === 'tool' && m.tool_call_id === 'mp');
    const content = String(toolMsg?.content);
    expect(content).toContain('"bash": 1');
    expect(content).toContain('defaultDecision');
    expect(content).toContain('"read": 0');
    expect(content).toContain('recursive program calls are not allowed');
    const ls = await request(t.url).post(`/v1/sessions/${id}/tools/ls`).send({ args: {} }).expect(200);
    expect(ls.body.output).not.toContain('escaped');
    t.fake.assertDone();
  });

  it('sandbox limits hold through the tool: an endless loop is stopped by limits.timeoutMs', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    const out = await request(t.url).post(`/v1/sessions/${id}/program`).send({ source: 'function run(){ while(true){} }', limits: { timeoutMs: 300 } }).expect(200);
    expect(out.body.exitCode).toBe(1);
    expect(out.body.output).toContain('limits.timeoutMs');
    const bad = await request(t.url).post(`/v1/sessions/${id}/program`).send({ source: 'x', path: 'y' }).expect(200);
    expect(bad.body.exitCode).toBe(1);
  });
});

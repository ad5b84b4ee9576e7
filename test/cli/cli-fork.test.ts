// `a3s fork` (issue 32), running the built process against a real server.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../support/fake-provider.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { buildCli, removeCli, runA3s } from './a3s-process.js';

const conversation = (r: RecordedRequest) =>
  r.body.messages.filter((m) => m.role !== 'system').map((m) => `${m.role}:${String(m.content ?? '')}`);

describe('a3s fork', () => {
  let cli: string;
  let t: TestServer;
  let env: Record<string, string>;
  const runs: string[] = [];

  beforeAll(async () => {
    cli = buildCli();
    t = await startTestServer();
    env = { HOME: tempDir('a3s-home-'), A3S_URL: t.url };
    await request(t.url).post('/v1/sessions').send({ sessionId: 'cli-parent' }).expect(201);
    for (const [input, text] of [
      ['first', 'one'],
      ['second', 'two'],
    ]) {
      t.fake.script({ text });
      runs.push((await request(t.url).post('/v1/sessions/cli-parent/runs').send({ input, wait: true })).body.runId);
    }
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    if (cli) removeCli(cli);
  });

  it('--at-run with --id prints the new id; the fork sends the messages before that run', async () => {
    const forked = await runA3s(cli, ['fork', 'cli-parent', '--at-run', runs[1]!, '--id', 'cli-fork'], { env });
    expect(forked).toMatchObject({ code: 0, stdout: 'cli-fork\n' });
    expect(forked.stderr).toBe(`[fork] session cli-fork from cli-parent before run ${runs[1]} (2 messages)\n`);
    t.fake.script({
      expect: (r) => expect(conversation(r)).toEqual(['user:first', 'assistant:one', 'user:again']),
      text: 'forked answer',
    });
    const ran = await runA3s(cli, ['run', '--session', 'cli-fork', 'again'], { env });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain('forked answer');
    t.fake.assertDone();
  });

  it('--at-message N --json prints the info; a refused request exits 2 (400/403) or 1 (409), usage errors 2', async () => {
    const json = await runA3s(cli, ['fork', 'cli-parent', '--at-message', '1', '--json'], { env });
    expect(json.code).toBe(0);
    const info = JSON.parse(json.stdout) as { id: string; messageCount: number; forkedFrom: unknown };
    expect(info).toMatchObject({ messageCount: 1, forkedFrom: { sessionId: 'cli-parent', atMessage: 1 } });
    const whole = await runA3s(cli, ['fork', 'cli-parent'], { env });
    expect(whole.stderr).toBe(`[fork] session ${whole.stdout.trim()} from cli-parent (4 messages)\n`);
    const far = await runA3s(cli, ['fork', 'cli-parent', '--at-message', '9'], { env });
    expect(far.code).toBe(2);
    expect(far.stderr).toMatch(/^a3s: VALIDATION_ERROR: body\.atMessage: must be at most 4/);
    const taken = await runA3s(cli, ['fork', 'cli-parent', '--id', 'cli-fork'], { env });
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/^a3s: SESSION_EXISTS: /);
    const both = await runA3s(cli, ['fork', 'cli-parent', '--at-run', runs[0]!, '--at-message', '1'], { env });
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/^a3s: --at-run and --at-message: give one of them, not both/);
    expect((await runA3s(cli, ['fork'], { env })).stderr).toMatch(/^a3s: missing SESSION/);
    expect((await runA3s(cli, ['fork', 'cli-parent', '--at-message', 'x'], { env })).code).toBe(2);
    expect((await runA3s(cli, ['fork', '--help'], { env })).stdout).toMatch(/^Usage: a3s fork SESSION/);
  });
});

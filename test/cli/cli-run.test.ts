import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/run-helpers.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { buildCli, removeCli, runA3s, startA3s } from './a3s-process.js';

type Envelope = {
  version: number;
  type: string;
  payload: Record<string, unknown>;
  metadata: { session_sequence: number; run_id?: string };
};

const SESSION_LINE = /\[run\] session (\S+), run (\S+)/;

function ndjson(text: string): Envelope[] {
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Envelope);
}

describe('a3s run against a real server', () => {
  let cli: string;
  let t: TestServer;
  let env: Record<string, string>;
  let policyFile: string;

  beforeAll(async () => {
    cli = buildCli();
    t = await startTestServer({
      files: {
        'package.json': JSON.stringify({
          name: 'demo',
          scripts: { test: "node -e \"process.exit(require('fs').existsSync('tests-fail') ? 1 : 0)\"" },
        }),
        'package-lock.json': '{}',
        'notes.txt': 'alpha\n',
      },
    });
    const home = tempDir('a3s-home-');
    env = { HOME: home, A3S_URL: t.url };
    policyFile = join(home, 'policy.json');
    writeFileSync(
      policyFile,
      JSON.stringify({
        permissionPolicy: { ask: ['write'], defaultDecision: 'allow' },
        confirmationPolicy: { enabled: true, defaultTimeoutMs: 20_000 },
      }),
    );
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    if (cli) removeCli(cli);
  });

  it('a completed run without verification: the answer on stdout, tool activity as plain lines on stderr, exit 0', async () => {
    t.fake.script(
      { toolCalls: [{ id: 'c_read', name: 'read', arguments: { file_path: 'notes.txt' } }] },
      { text: 'The notes say alpha.', chunks: 3 },
    );
    const result = await runA3s(cli, ['run', '--workspace', t.root, 'what do the notes say?'], { env });
    expect(result.stderr).toMatch(SESSION_LINE);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('The notes say alpha.\n');
    expect(result.stderr).toContain('[tool] read: notes.txt\n');
    expect(result.stderr).toMatch(/\[tool\] read: exit 0, \d+ ms\n/);
    expect(result.stderr).toContain('completed (verification skipped)');
    expect(t.fake.requests.at(-1)?.body.messages.find((m) => m.role === 'user')?.content).toBe(
      'what do the notes say?',
    );
    t.fake.assertDone();
  });

  // `script` (util-linux) runs the CLI on a pseudo-terminal, so stderr is a TTY.
  it.skipIf(spawnSync('script', ['--version']).status !== 0)(
    'on a terminal, tool activity is a progress line replaced by a permanent line when the call ends',
    async () => {
      t.fake.script(
        { toolCalls: [{ id: 'c_slow', name: 'bash', arguments: { command: 'sleep 0.4; echo hi' } }] },
        { text: 'Done: hi' },
      );
      const onTty = await runA3s(cli, [], {
        env: { ...env, A3S_CLI: cli },
        shell: `script -qec 'node "$A3S_CLI" run hello' /dev/null < /dev/null`,
      });
      expect(onTty.code).toBe(0);
      // The terminal's bytes with carriage returns and escapes made visible.
      const shown = onTty.stdout.replaceAll('\r', '<CR>').replaceAll('\u001b', '<ESC>');
      expect(shown).toMatch(/<CR><ESC>\[2K[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] bash: sleep 0\.4; echo hi \d+ ms/);
      expect(shown).toMatch(/<CR><ESC>\[2K✓ bash: sleep 0\.4; echo hi \(exit 0, \d+ ms\)<CR>\nDone: hi<CR>\n/);
      t.fake.assertDone();
    },
  );

  it('--json prints the AgentResult; a run whose bash call ran the failing preset test exits 1 (verification failed)', async () => {
    t.fake.script(
      { toolCalls: [{ id: 'c_t', name: 'bash', arguments: { command: 'npm test' } }] },
      { text: 'tests fail' },
    );
    writeFileSync(join(t.root, 'tests-fail'), '');
    const result = await runA3s(cli, ['run', '--json', 'run the tests'], { env });
    rmSync(join(t.root, 'tests-fail'));
    expect(result.code).toBe(1);
    const agentResult = JSON.parse(result.stdout);
    expect(agentResult).toMatchObject({
      text: 'tests fail',
      toolCallsCount: 1,
      verificationStatus: 'failed',
      failedVerificationCount: 1,
      verificationReportCount: 1,
    });
    expect(result.stderr).toContain('Verification failed');
    t.fake.assertDone();
  });

  it('verification passed exits 0; --wait-verification turns a run without a report into 4 (needs review)', async () => {
    t.fake.script(
      { toolCalls: [{ id: 'c_ok', name: 'bash', arguments: { command: 'npm test' } }] },
      { text: 'tests pass' },
    );
    const passed = await runA3s(cli, ['run', '--json', '--wait-verification', 'run the tests'], { env });
    expect(JSON.parse(passed.stdout)).toMatchObject({ verificationStatus: 'passed', verificationReportCount: 1 });
    expect(passed.code).toBe(0);
    t.fake.script({ text: 'nothing verified' });
    const unverified = await runA3s(cli, ['run', '--wait-verification', 'just answer'], { env });
    expect(unverified.stdout).toBe('nothing verified\n');
    expect(unverified.stderr).toContain('--wait-verification: the run produced no verification report');
    expect(unverified.code).toBe(4);
    t.fake.assertDone();
  });

  it('a failed run exits 1 and names the error', async () => {
    t.fake.script({ error: { status: 400, message: 'the model refuses' } });
    const result = await runA3s(cli, ['run', 'hello'], { env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/failed: PROVIDER_ERROR: .*the model refuses/);
    t.fake.assertDone();
  });

  it('a confirmation without --approve exits 3 and leaves the call pending; a3s approve answers it; a3s events prints NDJSON envelopes', async () => {
    t.fake.script(
      { toolCalls: [{ id: 'c_w', name: 'write', arguments: { file_path: 'approved.txt', content: 'yes' } }] },
      { text: 'written' },
    );
    const asked = await runA3s(cli, ['run', '--policy', policyFile, 'write it'], { env });
    expect(asked.code).toBe(3);
    const [, sessionId, runId] = SESSION_LINE.exec(asked.stderr) ?? [];
    expect(asked.stderr).toContain(`a3s approve ${sessionId} c_w`);
    const pending = (await request(t.url).get(`/v1/sessions/${sessionId}/confirmations`).expect(200)).body
      .confirmations;
    expect(pending).toMatchObject([{ toolId: 'c_w', toolName: 'write', runId }]);

    const approved = await runA3s(cli, ['approve', sessionId!, 'c_w', '--reason', 'looks fine'], { env });
    expect(approved).toMatchObject({ code: 0, stdout: `approved c_w in session ${sessionId}\n` });
    await eventually(
      async () =>
        (await request(t.url).get(`/v1/sessions/${sessionId}/runs/${runId}`).expect(200)).body.run.status ===
        'completed',
      'the approved run to complete',
    );
    expect(readFileSync(join(t.root, 'approved.txt'), 'utf8')).toBe('yes');
    const again = await runA3s(cli, ['approve', sessionId!, 'c_w'], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^a3s: CONFIRMATION_SETTLED: /);

    const events = await runA3s(cli, ['events', sessionId!], { env });
    expect(events.code).toBe(0);
    const all = ndjson(events.stdout);
    expect(all.every((e) => e.version === 1 && Object.keys(e).sort().join() === 'metadata,payload,type,version')).toBe(
      true,
    );
    expect(all.map((e) => e.metadata.session_sequence)).toEqual(all.map((_, i) => i + 1));
    const types = all.map((e) => e.type);
    expect(types[0]).toBe('agent_start');
    expect(types).toContain('confirmation_required');
    expect(all.find((e) => e.type === 'confirmation_received')?.payload).toMatchObject({
      tool_id: 'c_w',
      approved: true,
      reason: 'looks fine',
    });
    expect(types.at(-1)).toBe('agent_end');
    const cursor = all.find((e) => e.type === 'confirmation_required')!.metadata.session_sequence;
    const later = ndjson((await runA3s(cli, ['events', sessionId!, '--after', String(cursor)], { env })).stdout);
    expect(later.map((e) => e.metadata.session_sequence)).toEqual(
      all.filter((e) => e.metadata.session_sequence > cursor).map((e) => e.metadata.session_sequence),
    );
    t.fake.assertDone();
  });

  it('--approve approves confirmations as they come and the run completes', async () => {
    t.fake.script(
      { toolCalls: [{ id: 'c_w2', name: 'write', arguments: { file_path: 'auto.txt', content: 'auto' } }] },
      { text: 'done' },
    );
    const result = await runA3s(cli, ['run', '--policy', policyFile, '--approve', 'write it'], { env });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('done\n');
    expect(result.stderr).toContain('[confirm] approved write auto.txt');
    expect(readFileSync(join(t.root, 'auto.txt'), 'utf8')).toBe('auto');
    t.fake.assertDone();
  });

  it('--session resumes that session (history kept), or creates it with that id; the prompt "-" reads stdin', async () => {
    t.fake.script({ text: 'first' }, { text: 'second' });
    const first = await runA3s(cli, ['run', '--session', 'ci-bot-1', 'one'], { env });
    expect(first).toMatchObject({ code: 0, stdout: 'first\n' });
    const second = await runA3s(cli, ['run', '--session', 'ci-bot-1', '--model', 'openai/other', '-'], {
      env,
      stdin: 'two from stdin',
    });
    expect(second).toMatchObject({ code: 0, stdout: 'second\n' });
    expect(second.stderr).toContain('--model apply to new sessions only');
    const messages = t.fake.requests
      .at(-1)!
      .body.messages.filter((m) => m.role === 'user')
      .map((m) => m.content);
    expect(messages).toEqual(['one', 'two from stdin']);
    t.fake.assertDone();
  });

  it("--multitask enqueue waits behind the session's active run and prints its answer", async () => {
    t.fake.script({ delayMs: 600, text: 'busy answer' }, { text: 'queued answer' });
    await request(t.url).post('/v1/sessions').send({ sessionId: 'ci-busy' }).expect(201);
    await request(t.url).post('/v1/sessions/ci-busy/runs').send({ input: 'busy' }).expect(202);
    const queued = await runA3s(cli, ['run', '--session', 'ci-busy', '--multitask', 'enqueue', 'after it'], { env });
    expect(queued).toMatchObject({ code: 0, stdout: 'queued answer\n' });
    const inputs = t.fake.requests
      .at(-1)!
      .body.messages.filter((m) => m.role === 'user')
      .map((m) => m.content);
    expect(inputs).toEqual(['busy', 'after it']);
    t.fake.assertDone();
  });

  it('Ctrl-C cancels the run: it ends cancelled and a3s exits 1', async () => {
    t.fake.script({ hang: true });
    const before = t.fake.requests.length;
    const running = startA3s(cli, ['run', 'take your time'], { env });
    await t.fake.waitForRequests(before + 1);
    // The CLI follows the run (and handles Ctrl-C) from the moment it has printed the run's id.
    await eventually(() => running.stderr.includes('[run] session'), 'the CLI to follow the run');
    running.child.kill('SIGINT');
    const ended = await running.exited;
    expect(ended.code).toBe(1);
    expect(ended.stderr).toContain('[run] cancelling run');
    expect(ended.stderr).toMatch(/\[run\] \S+ cancelled: CANCELLED: /);
    expect(t.fake.requests.at(-1)?.abortedAtMs).toBeDefined();
    t.fake.assertDone();
  });

  it('events --follow prints new events until Ctrl-C', async () => {
    const sessionId = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id as string;
    const follower = startA3s(cli, ['events', sessionId, '--follow'], { env });
    t.fake.script({ text: 'followed' });
    await request(t.url).post(`/v1/sessions/${sessionId}/runs`).send({ input: 'go', wait: true }).expect(200);
    await eventually(() => follower.stdout.includes('"agent_end"'), 'agent_end on the follower');
    follower.child.kill('SIGINT');
    const ended = await follower.exited;
    expect(ended.code).toBe(0);
    expect(ndjson(ended.stdout).map((e) => e.type)).toEqual(
      expect.arrayContaining(['agent_start', 'text_delta', 'agent_end']),
    );
    t.fake.assertDone();
  });
});

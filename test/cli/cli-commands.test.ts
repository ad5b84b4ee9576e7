import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportExitCode } from '../../src/cli/verify-command.js';
import { runExitCode } from '../../src/cli/run-exit-code.js';
import type { AgentResult } from '../../src/protocol/run-record.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { buildCli, removeCli, runA3s } from './a3s-process.js';

const TOKEN = 'tok-cli-test-0123456789abcdef';

let cli: string;
beforeAll(() => {
  cli = buildCli();
}, 120_000);
afterAll(() => {
  if (cli) removeCli(cli);
});

describe('a3s: help, usage errors, configuration', () => {
  it('--help on a3s and on every command, --version, and a3s without a command (usage, exit 2)', async () => {
    const top = await runA3s(cli, ['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('Usage: a3s <command> [flags]');
    for (const command of [
      'run',
      'verify',
      'sessions',
      'events',
      'approve',
      'answer',
      'steer',
      'interrupt',
      'resume',
      'fork',
      'diff',
      'revert',
      'unrevert',
    ]) {
      const help = await runA3s(cli, [command, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Usage: a3s ${command}`));
    }
    const version = await runA3s(cli, ['--version']);
    expect(version).toMatchObject({
      code: 0,
      stdout: `${(JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version}\n`,
    });
    const bare = await runA3s(cli, []);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('Commands:');
    expect(bare.stdout).toBe('');
    expect((await runA3s(cli, ['help', 'verify'])).stdout).toMatch(/^Usage: a3s verify/);
  });

  it('usage errors are one line and exit 2, with no stack trace', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['frobnicate'], /^a3s: unknown command "frobnicate"/],
      [['run'], /^a3s: missing "prompt"/],
      [['run', '--bogus', 'hi'], /^a3s: Unknown option '--bogus'/],
      [['run', '--multitask', 'later', 'hi'], /^a3s: --multitask must be one of reject, enqueue, interrupt, rollback/],
      [['events'], /^a3s: missing SESSION/],
      [['events', 's1', '--after', 'soon'], /^a3s: --after must be an integer >= 0, got "soon"/],
      [['approve', 's1'], /^a3s: missing TOOL_ID/],
      [['verify', '--cmd', 'true'], /^a3s: missing --subject/],
      [['verify', '--subject', 'x'], /^a3s: missing --cmd/],
      [['sessions', 'explode'], /^a3s: unknown sessions command "explode"/],
      [['resume', 's1'], /^a3s: missing RUN_ID/],
      [['answer', 's1'], /^a3s: missing QUESTION_ID/],
      [['answer', 's1', 'q1'], /^a3s: missing the answer: --option TEXT/],
      [['answer', 's1', 'q1', '--option', 'a', 'b'], /^a3s: give one of --option, --decline or a free-text answer/],
      [['steer', 's1'], /^a3s: missing TEXT/],
      [['interrupt'], /^a3s: missing SESSION/],
      [['interrupt', 's1', 'now'], /^a3s: unexpected argument "now"/],
    ];
    for (const [args, message] of cases) {
      const result = await runA3s(cli, args, { env: { HOME: tempDir('a3s-home-') } });
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('a missing token for a server off the loopback address is a clear config error (exit 2)', async () => {
    const home = tempDir('a3s-home-');
    const result = await runA3s(cli, ['sessions'], { env: { HOME: home, A3S_URL: 'http://203.0.113.7:8080' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `a3s: no token for http://203.0.113.7:8080: a server off the loopback address needs one; set A3S_TOKEN, pass --token, or put "token" in ${home}/.config/a3s/cli.json\n`,
    );
  });

  it('a bad config file, a bad URL and a bad policy file name the file and the field (exit 2)', async () => {
    const home = tempDir('a3s-home-');
    mkdirSync(join(home, '.config', 'a3s'), { recursive: true });
    const configFile = join(home, '.config', 'a3s', 'cli.json');
    writeFileSync(configFile, JSON.stringify({ url: 'http://127.0.0.1:1', tokn: 'x' }));
    const unknown = await runA3s(cli, ['sessions'], { env: { HOME: home } });
    expect(unknown).toMatchObject({ code: 2, stderr: `a3s: ${configFile}: tokn: unknown key\n` });
    writeFileSync(configFile, '{"url": 5}');
    const wrongType = await runA3s(cli, ['sessions'], { env: { HOME: home } });
    expect(wrongType.code).toBe(2);
    expect(wrongType.stderr).toMatch(new RegExp(`^a3s: ${configFile}: url: `));
    const badUrl = await runA3s(cli, ['sessions', '--url', 'not a url'], { env: { HOME: tempDir('a3s-home-') } });
    expect(badUrl).toMatchObject({ code: 2 });
    expect(badUrl.stderr).toMatch(/^a3s: the server URL "not a url" is not a valid URL/);
    const policy = join(home, 'policy.json');
    writeFileSync(policy, JSON.stringify({ permissionPolicy: { defaultDecision: 'maybe' } }));
    const badPolicy = await runA3s(cli, ['run', '--policy', policy, 'hi'], { env: { HOME: home } });
    expect(badPolicy.code).toBe(2);
    expect(badPolicy.stderr).toMatch(new RegExp(`^a3s: --policy ${policy}:1:22: permissionPolicy\\.defaultDecision: `));
  });

  it('an unreachable server exits 1 with one line', async () => {
    const result = await runA3s(cli, ['sessions'], {
      env: { HOME: tempDir('a3s-home-'), A3S_URL: 'http://127.0.0.1:1' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^a3s: NETWORK_ERROR: .*\n$/);
  });

  it('maps run outcomes and report statuses onto the exit codes', () => {
    const result = (verificationStatus: AgentResult['verificationStatus']) => ({ verificationStatus }) as AgentResult;
    expect(runExitCode('completed', result('passed'), false)).toBe(0);
    expect(runExitCode('completed', result('skipped'), false)).toBe(0);
    expect(runExitCode('completed', result('skipped'), true)).toBe(4);
    expect(runExitCode('completed', result('needs_review'), false)).toBe(4);
    expect(runExitCode('completed', result('failed'), false)).toBe(1);
    expect(runExitCode('failed', result('passed'), false)).toBe(1);
    expect(runExitCode('cancelled', result('skipped'), false)).toBe(1);
    expect([
      reportExitCode({ status: 'passed' }),
      reportExitCode({ status: 'skipped' }),
      reportExitCode({ status: 'failed' }),
      reportExitCode({ status: 'needs_review' }),
    ]).toEqual([0, 0, 1, 4]);
  });
});

describe('a3s against a real server: tokens, verify, sessions, resume', () => {
  let fake: FakeProvider;
  let t: TestServer;
  let home: string;

  beforeAll(async () => {
    fake = await startFakeProvider();
    t = await startTestServer({
      fake,
      config: {
        apiTokens: [{ token: TOKEN, principal: 'ci-bot', tenantId: 'default', scopes: ['sessions', 'host_direct'] }],
      },
    });
    home = tempDir('a3s-home-');
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('token: flags > env > config file; a server that wants one answers 401 without it (exit 2)', async () => {
    const none = await runA3s(cli, ['sessions'], { env: { HOME: home, A3S_URL: t.url } });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^a3s: UNAUTHORIZED: /);
    const configHome = tempDir('a3s-home-');
    mkdirSync(join(configHome, '.config', 'a3s'), { recursive: true });
    writeFileSync(join(configHome, '.config', 'a3s', 'cli.json'), JSON.stringify({ url: t.url, token: TOKEN }));
    expect((await runA3s(cli, ['sessions'], { env: { HOME: configHome } })).code).toBe(0);
    const envWins = await runA3s(cli, ['sessions'], { env: { HOME: configHome, A3S_TOKEN: 'wrong-token-0123456789' } });
    expect(envWins.code).toBe(2);
    expect(envWins.stderr).toMatch(/^a3s: UNAUTHORIZED: /);
    expect(
      (
        await runA3s(cli, ['sessions', '--token', TOKEN], {
          env: { HOME: configHome, A3S_TOKEN: 'wrong-token-0123456789' },
        })
      ).code,
    ).toBe(0);
  });

  it('verify: passed exits 0, failed exits 1 with the output tail on stderr, --json prints the report', async () => {
    const env = { HOME: home, A3S_URL: t.url, A3S_TOKEN: TOKEN };
    const passed = await runA3s(cli, ['verify', '--subject', 'smoke', '--cmd', 'printf ok', '--cmd', 'true'], { env });
    expect(passed.code).toBe(0);
    expect(passed.stdout).toMatch(
      /^passed +cmd-1 {2}printf ok {2}\(exit 0, \d+ ms\)\npassed +cmd-2 {2}true {2}\(exit 0, \d+ ms\)\nsmoke: passed \(2\/2 passed, 0 failed, 0 skipped; report \S+ in session \S+\)\n$/,
    );
    const failed = await runA3s(
      cli,
      ['verify', '--subject', 'unit', '--cmd', 'echo boom; exit 3', '--workspace', t.root],
      { env },
    );
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain('failed       cmd-1  echo boom; exit 3  (exit 3,');
    expect(failed.stderr).toContain('boom');
    const sessionId = (
      await request(t.url).post('/v1/sessions').set('authorization', `Bearer ${TOKEN}`).send({}).expect(201)
    ).body.session.id as string;
    const json = await runA3s(
      cli,
      ['verify', '--json', '--subject', 'in session', '--session', sessionId, '--cmd', 'true'],
      { env },
    );
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      schema: 'a3s.verification_report.v1',
      subject: 'in session',
      status: 'passed',
      session_id: sessionId,
      checks: [{ id: 'cmd-1', command: 'true', required: true, exit_code: 0 }],
    });
    const reports = (
      await request(t.url)
        .get(`/v1/sessions/${sessionId}/verifications`)
        .set('authorization', `Bearer ${TOKEN}`)
        .expect(200)
    ).body.reports;
    expect(reports.map((r: { subject: string }) => r.subject)).toEqual(['in session']);
  });

  it('a token without host_direct cannot verify: FORBIDDEN, exit 2', async () => {
    const limited = await startTestServer({
      fake,
      config: { apiTokens: [{ token: TOKEN, principal: 'viewer', tenantId: 'default', scopes: ['sessions'] }] },
    });
    try {
      const result = await runA3s(cli, ['verify', '--subject', 's', '--cmd', 'true'], {
        env: { HOME: home, A3S_URL: limited.url, A3S_TOKEN: TOKEN },
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^a3s: FORBIDDEN: /);
    } finally {
      await limited.close();
    }
  });

  it('sessions ls, show and close', async () => {
    const env = { HOME: home, A3S_URL: t.url, A3S_TOKEN: TOKEN };
    await request(t.url)
      .post('/v1/sessions')
      .set('authorization', `Bearer ${TOKEN}`)
      .send({ sessionId: 'listed-1' })
      .expect(201);
    const ls = await runA3s(cli, ['sessions', 'ls'], { env });
    expect(ls.code).toBe(0);
    expect(ls.stdout.split('\n').find((line) => line.startsWith('listed-1\t'))).toMatch(
      /^listed-1\tidle\t\/\S+\topenai\/test-model\t0 messages$/,
    );
    const json = JSON.parse((await runA3s(cli, ['sessions', '--json'], { env })).stdout) as { id: string }[];
    expect(json.map((s) => s.id)).toContain('listed-1');
    const show = await runA3s(cli, ['sessions', 'show', 'listed-1'], { env });
    expect(show.code).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({
      id: 'listed-1',
      model: 'openai/test-model',
      busy: false,
      closed: false,
    });
    expect(await runA3s(cli, ['sessions', 'close', 'listed-1'], { env })).toMatchObject({
      code: 0,
      stdout: 'closed listed-1\n',
    });
    const missing = await runA3s(cli, ['sessions', 'close', 'no-such-session'], { env });
    expect(missing).toMatchObject({ code: 1, stderr: 'a3s: SESSION_NOT_FOUND: session no-such-session not found\n' });
    const showMissing = await runA3s(cli, ['sessions', 'show', 'no-such-session'], { env });
    expect(showMissing.code).toBe(1);
    expect(showMissing.stderr).toMatch(/^a3s: SESSION_NOT_FOUND: /);
  });

  it('a server error with a code prints "a3s: CODE: message": a bad --model is VALIDATION_ERROR (exit 2)', async () => {
    const result = await runA3s(cli, ['run', '--model', 'no-slash', 'hi'], {
      env: { HOME: home, A3S_URL: t.url, A3S_TOKEN: TOKEN },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^a3s: VALIDATION_ERROR: .*model/);
  });

  it('resume: a run stopped by a server shutdown continues on a fresh server and exits like run', async () => {
    const dataDir = tempDir('a3s-resume-data-');
    const root = tempDir('a3s-resume-ws-');
    writeFileSync(join(root, 'a.txt'), 'alpha beta\n');
    const first = await startTestServer({ fake, dataDir, root });
    const id = 'resume-me';
    await request(first.url).post('/v1/sessions').send({ sessionId: id, autoSave: true }).expect(201);
    fake.script({ toolCalls: [{ id: 'r1', name: 'read', arguments: { file_path: 'a.txt' } }] }, { hang: true });
    const before = fake.requests.length;
    const started = await request(first.url).post(`/v1/sessions/${id}/runs`).send({ input: 'read a.txt' }).expect(202);
    // The checkpoint after the read round is saved before the second (hanging) provider request starts.
    await fake.waitForRequests(before + 2);
    await first.close();
    const second = await startTestServer({ fake, dataDir, root });
    try {
      fake.script({ text: 'read: alpha beta' });
      const env = { HOME: home, A3S_URL: second.url };
      const resumed = await runA3s(cli, ['resume', id, started.body.runId as string], { env });
      expect(resumed.stderr).toMatch(
        new RegExp(`\\[run\\] session ${id}, run \\S+ \\(resumed from ${started.body.runId}\\)`),
      );
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toBe('read: alpha beta\n');
      const unknown = await runA3s(cli, ['resume', id, 'run_nope'], { env });
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/^a3s: (CHECKPOINT_NOT_FOUND|RUN_NOT_FOUND): /);
      fake.assertDone();
    } finally {
      await second.close();
    }
  });
});

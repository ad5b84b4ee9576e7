// `a3s run --keep` (the session a run created is closed unless kept), global flags before the command,
// did-you-mean for unknown commands and flags, policy-file errors with line:column, "1 message".
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { buildCli, removeCli, runA3s } from './a3s-process.js';

const SESSION_LINE = /\[run\] session (\S+), run (\S+)/;

let cli: string;
beforeAll(() => {
  cli = buildCli();
}, 120_000);
afterAll(() => {
  if (cli) removeCli(cli);
});

describe('a3s usage errors: did you mean, global flags first, policy lines', () => {
  const home = tempDir('a3s-home-');
  const env = { HOME: home, A3S_URL: 'http://127.0.0.1:1' };

  it('an unknown command or flag close to a known one is named with the known one', async () => {
    const cases: Array<[string[], string]> = [
      [['rn', 'hi'], 'a3s: unknown command "rn" (did you mean run?)\nRun "a3s --help" for usage.\n'],
      [['sesions'], 'a3s: unknown command "sesions" (did you mean sessions?)\nRun "a3s --help" for usage.\n'],
      [['help', 'verfy'], 'a3s: unknown command "verfy" (did you mean verify?)\nRun "a3s --help" for usage.\n'],
      [['run', '--kep', 'hi'], `a3s: Unknown option '--kep' (did you mean --keep?)\nRun "a3s run --help" for usage.\n`],
      [
        ['run', '--workspce', '.', 'hi'],
        `a3s: Unknown option '--workspce' (did you mean --workspace?)\nRun "a3s run --help" for usage.\n`,
      ],
      [
        ['events', 's1', '--folow'],
        `a3s: Unknown option '--folow' (did you mean --follow?)\nRun "a3s events --help" for usage.\n`,
      ],
      // A global flag is suggested to every command.
      [
        ['sessions', '--tokn', 't'],
        `a3s: Unknown option '--tokn' (did you mean --token?)\nRun "a3s sessions --help" for usage.\n`,
      ],
      [
        ['sessions', 'shwo', 'x'],
        'a3s: unknown sessions command "shwo" (did you mean show?)\nRun "a3s sessions --help" for usage.\n',
      ],
    ];
    for (const [args, stderr] of cases) {
      const result = await runA3s(cli, args, { env });
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 2, stderr });
    }
    // Nothing close: the list of commands, or util.parseArgs's own message with its hint about "--".
    const far = await runA3s(cli, ['frobnicate'], { env });
    expect(far.stderr).toMatch(/^a3s: unknown command "frobnicate" \(run, verify, sessions, events, /);
    const farFlag = await runA3s(cli, ['run', '--zzzzzz', 'hi'], { env });
    expect(farFlag.code).toBe(2);
    expect(farFlag.stderr).toMatch(
      /^a3s: Unknown option '--zzzzzz'\. To specify a positional argument .*'-- "--zzzzzz"/,
    );
    expect(farFlag.stderr).not.toContain('did you mean');
    // A short flag gets no suggestion: "-fix the bug" is a prompt that wants "--".
    const short = await runA3s(cli, ['run', '-j', 'hi'], { env });
    expect(short.stderr).toMatch(/^a3s: Unknown option '-j'\. To specify a positional argument/);
  });

  it('global flags with no command after them are a usage error naming the flags, never their values', async () => {
    const noCommand = await runA3s(cli, ['--url', 'http://127.0.0.1:9', '--token', 'sekrit-value'], { env });
    expect(noCommand).toMatchObject({
      code: 2,
      stderr: 'a3s: missing the command after --url --token\nRun "a3s --help" for usage.\n',
    });
    // --help and --version still work after global flags.
    const help = await runA3s(cli, ['--url', 'http://127.0.0.1:9', '--help'], { env });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: a3s <command> [flags]');
    const version = await runA3s(cli, ['--no-forward', '--version'], { env });
    expect(version).toMatchObject({ code: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+/) });
  });

  it('a policy file error names the line and column of the field or of the JSON mistake', async () => {
    const policy = join(home, 'policy.json');
    const cases: Array<[string, RegExp]> = [
      // The bad value's key, on line 3.
      [
        '{\n  "permissionPolicy": {\n    "defaultDecision": "maybe"\n  }\n}\n',
        /^a3s: --policy \S+policy\.json:3:5: permissionPolicy\.defaultDecision: /,
      ],
      // A key the schema does not know.
      [
        '{\n  "permissionPolicy": {"defaultDecision": "allow"},\n  "confirmation": {}\n}\n',
        /^a3s: --policy \S+policy\.json:3:3: confirmation: unknown key\n/,
      ],
      // A value equal to a key name earlier in the file is not taken for the key.
      [
        '{"permissionPolicy": {"allow": ["defaultDecision"],\n "defaultDecision": 7}}',
        /^a3s: --policy \S+policy\.json:2:2: permissionPolicy\.defaultDecision: /,
      ],
      // Bad JSON: where the parser stopped.
      ['{\n  "permissionPolicy": {,\n}', /^a3s: --policy \S+policy\.json:2:24: .*JSON at position 25\n/],
      ['{"permissionPolicy":\n  {"deny": [', /^a3s: --policy \S+policy\.json:2:13: Unexpected end of JSON input\n/],
    ];
    for (const [text, message] of cases) {
      writeFileSync(policy, text);
      const result = await runA3s(cli, ['run', '--policy', policy, 'hi'], { env });
      expect({ text, code: result.code }).toEqual({ text, code: 2 });
      expect(result.stderr).toMatch(message);
    }
    // A missing required field has no place in the file: no line.
    writeFileSync(policy, '{}');
    const missing = await runA3s(cli, ['run', '--policy', policy, 'hi'], { env });
    expect(missing.stderr).toMatch(/^a3s: --policy \S+policy\.json: permissionPolicy: required/);
  });
});

describe('a3s run closes the session it created unless --keep', () => {
  let t: TestServer;
  let env: Record<string, string>;
  let policyFile: string;

  beforeAll(async () => {
    t = await startTestServer();
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
  });

  async function liveIds(): Promise<string[]> {
    return ((await request(t.url).get('/v1/sessions').expect(200)).body.sessions as { id: string }[]).map((s) => s.id);
  }

  it('without --keep the session is closed once the run ended, completed or failed', async () => {
    t.fake.script({ text: 'closed after' });
    const done = await runA3s(cli, ['run', 'hello'], { env });
    expect(done).toMatchObject({ code: 0, stdout: 'closed after\n' });
    const [, sessionId] = SESSION_LINE.exec(done.stderr) ?? [];
    expect(done.stderr).toContain(`[run] closed session ${sessionId} (--keep keeps it)\n`);
    expect(await liveIds()).not.toContain(sessionId);
    await request(t.url).get(`/v1/sessions/${sessionId}`).expect(410);

    t.fake.script({ error: { status: 400, message: 'no' } });
    const failed = await runA3s(cli, ['run', 'hello'], { env });
    expect(failed.code).toBe(1);
    const [, failedId] = SESSION_LINE.exec(failed.stderr) ?? [];
    expect(failed.stderr).toContain(`[run] closed session ${failedId}`);
    expect(await liveIds()).not.toContain(failedId);
    t.fake.assertDone();
  });

  it('--keep keeps it (with global flags before the command); sessions ls counts "2 messages", a fork "1 message"', async () => {
    t.fake.script({ text: 'kept' });
    const kept = await runA3s(cli, ['--url', t.url, 'run', '--keep', 'hello'], { env: { HOME: env.HOME! } });
    expect(kept).toMatchObject({ code: 0, stdout: 'kept\n' });
    expect(kept.stderr).not.toContain('closed session');
    const [, sessionId] = SESSION_LINE.exec(kept.stderr) ?? [];
    expect(await liveIds()).toContain(sessionId);
    await request(t.url)
      .post(`/v1/sessions/${sessionId}/fork`)
      .send({ atMessage: 1, sessionId: 'one-message' })
      .expect(201);
    const ls = await runA3s(cli, [`--url=${t.url}`, 'sessions'], { env: { HOME: env.HOME! } });
    expect(ls.code).toBe(0);
    const lines = ls.stdout.split('\n');
    expect(lines.find((line) => line.startsWith(`${sessionId}\t`))).toMatch(/\t2 messages$/);
    expect(lines.find((line) => line.startsWith('one-message\t'))).toMatch(/\t1 message$/);
    t.fake.assertDone();
  });

  it('a run that exits 3 (a confirmation waits) and a --session session are kept', async () => {
    t.fake.script({ toolCalls: [{ id: 'c_k', name: 'write', arguments: { file_path: 'k.txt', content: 'k' } }] });
    const asked = await runA3s(cli, ['run', '--policy', policyFile, 'write it'], { env });
    expect(asked.code).toBe(3);
    const [, askedId, askedRun] = SESSION_LINE.exec(asked.stderr) ?? [];
    expect(asked.stderr).not.toContain('closed session');
    expect(await liveIds()).toContain(askedId);
    await request(t.url).post(`/v1/sessions/${askedId}/runs/${askedRun}/cancel`).send({}).expect(200);

    t.fake.script({ text: 'named' });
    const named = await runA3s(cli, ['run', '--session', 'cli-named', 'hello'], { env });
    expect(named).toMatchObject({ code: 0, stdout: 'named\n' });
    expect(named.stderr).not.toContain('closed session');
    expect(await liveIds()).toContain('cli-named');
    t.fake.assertDone();
  });
});

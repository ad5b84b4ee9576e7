// The conversation in the `a3s` CLI (issue 31), running the built process against a real server: `run --attach`,
// questions of the agent (asked on a terminal, or printed with the `a3s answer` command and exit 3), `answer`,
// `steer` and `interrupt`.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider, type RecordedRequest } from '../support/fake-provider.js';
import { imageModelProviders } from '../support/image-model.js';
import { eventually, getRun } from '../support/run-helpers.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { buildCli, removeCli, runA3s, startA3s } from './a3s-process.js';

const SESSION_LINE = /\[run\] session (\S+), run (\S+)/;
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
const hasScript = spawnSync('script', ['--version']).status === 0;

const userContent = (req: RecordedRequest | undefined): unknown =>
  req?.body.messages.filter((m) => m.role === 'user').at(-1)?.content;
const toolResult = (req: RecordedRequest | undefined, id: string): unknown =>
  req?.body.messages.find((m) => m.role === 'tool' && (m as { tool_call_id?: string }).tool_call_id === id)?.content;
const ask = (id: string, args: Record<string, unknown>) => ({ toolCalls: [{ id, name: 'ask_user', arguments: args }] });

describe('a3s: attachments, questions and run control', () => {
  let cli: string;
  let fake: FakeProvider;
  let t: TestServer;
  let env: Record<string, string>;
  let files: string;

  beforeAll(async () => {
    cli = buildCli();
    fake = await startFakeProvider();
    t = await startTestServer({
      fake,
      config: {
        providers: imageModelProviders(fake),
      },
    });
    env = { HOME: tempDir('a3s-home-'), A3S_URL: t.url };
    files = tempDir('a3s-attach-');
    writeFileSync(join(files, 'pixel.png'), PNG);
    writeFileSync(join(files, 'notes.md'), '# notes\nalpha\n');
    writeFileSync(join(files, 'blob.bin'), Buffer.from([0x00, 0x01, 0xfe, 0xff]));
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await fake?.close();
    if (cli) removeCli(cli);
  });

  const ended = async (sessionId: string, runId: string) => {
    await eventually(
      async () => ['completed', 'failed', 'cancelled'].includes((await getRun(t, sessionId, runId)).status),
      'the run to end',
    );
    return getRun(t, sessionId, runId);
  };

  it('run --attach uploads an image (typed by its magic bytes) and a text file, then runs with both', async () => {
    fake.script({ text: 'a pixel and notes' });
    const result = await runA3s(
      cli,
      ['run', '--attach', 'pixel.png', '--attach', join(files, 'notes.md'), 'what are these?'],
      { env, cwd: files },
    );
    expect(result.stderr).toMatch(SESSION_LINE);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('a pixel and notes\n');
    expect(result.stderr).toMatch(/\[attach\] \S+pixel\.png: image\/png, \d+ bytes \(att_[0-9a-f]{32}\)/);
    expect(result.stderr).toMatch(/\[attach\] \S+notes\.md: text\/plain, 14 bytes/);
    expect(userContent(fake.requests.at(-1))).toEqual([
      { type: 'text', text: 'what are these?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
      { type: 'text', text: 'notes.md:\n# notes\nalpha\n' },
    ]);
    fake.assertDone();
  });

  it('run --attach of a file that is neither an image nor UTF-8 text, or missing, is a usage error naming it', async () => {
    const before = fake.requests.length;
    const binary = await runA3s(cli, ['run', '--attach', 'blob.bin', 'hi'], { env, cwd: files });
    expect(binary.code).toBe(2);
    expect(binary.stderr).toMatch(/^a3s: --attach blob\.bin: not a png, jpeg, gif or webp image, nor UTF-8 text/);
    const missing = await runA3s(cli, ['run', '--attach', 'nope.png', 'hi'], { env, cwd: files });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^a3s: --attach nope\.png: cannot be read \(ENOENT\)/);
    expect(fake.requests.length).toBe(before);
  });

  it('a question without a terminal prints the a3s answer commands and exits 3; a3s answer lets the run go on', async () => {
    fake.script(ask('c_q', { question: 'Which database?', options: ['postgres', 'sqlite'] }), {
      text: 'Using sqlite.',
    });
    const result = await runA3s(cli, ['run', 'set up the db'], { env });
    expect(result.code).toBe(3);
    const [, sessionId, runId] = SESSION_LINE.exec(result.stderr) ?? [];
    const questionId = /question id (\S+)\)/.exec(result.stderr)?.[1];
    expect(questionId).toBeDefined();
    expect(result.stderr).toContain('[question] Which database?\n  1. postgres\n  2. sqlite\n');
    expect(result.stderr).toContain(`  a3s answer ${sessionId} ${questionId} --option sqlite\n`);
    expect(result.stderr).toContain(`  a3s answer ${sessionId} ${questionId} "your answer"\n`);
    expect(result.stderr).toContain('it waits 30 s for an answer');
    // The run still waits on the server.
    expect((await getRun(t, sessionId!, runId!)).status).not.toMatch(/completed|failed|cancelled/);

    const wrong = await runA3s(cli, ['answer', sessionId!, questionId!, '--option', 'mysql'], { env });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/^a3s: VALIDATION_ERROR: body\.option: "mysql" is not one of the options/);
    const answered = await runA3s(cli, ['answer', sessionId!, questionId!, '--option', 'sqlite'], { env });
    expect(answered).toMatchObject({ code: 0, stdout: `answered ${questionId} in session ${sessionId}\n` });
    expect((await ended(sessionId!, runId!)).status).toBe('completed');
    expect(toolResult(fake.requests.at(-1), 'c_q')).toBe('The user chose: sqlite');
    const again = await runA3s(cli, ['answer', sessionId!, questionId!, 'too late'], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^a3s: QUESTION_(SETTLED|NOT_FOUND): /);
    fake.assertDone();
  });

  it('a3s answer --decline declines the question: the model is told and the run goes on', async () => {
    fake.script(ask('c_qd', { question: 'Which region?' }), { text: 'Picked eu-west.' });
    const result = await runA3s(cli, ['run', 'deploy'], { env });
    expect(result.code).toBe(3);
    const [, sessionId, runId] = SESSION_LINE.exec(result.stderr) ?? [];
    const questionId = /question id (\S+)\)/.exec(result.stderr)?.[1];
    const both = await runA3s(cli, ['answer', sessionId!, questionId!, '--decline', 'eu'], { env });
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/^a3s: give one of --option, --decline or a free-text answer/);
    const declined = await runA3s(cli, ['answer', sessionId!, questionId!, '--decline'], { env });
    expect(declined).toMatchObject({ code: 0, stdout: `declined ${questionId} in session ${sessionId}\n` });
    expect((await ended(sessionId!, runId!)).status).toBe('completed');
    expect(toolResult(fake.requests.at(-1), 'c_qd')).toContain('The user declined to answer');
    fake.assertDone();
  });

  it.skipIf(!hasScript)(
    'on a terminal the question is asked there: a number picks an option, words answer freely',
    async () => {
      fake.script(
        ask('c_t1', { question: 'Which color?', options: ['red', 'blue'], allow_free_text: false }),
        ask('c_t2', { question: 'Any last words?' }),
        { text: 'Blue it is.' },
      );
      const child = startA3s(cli, [], {
        env: { ...env, A3S_CLI: cli },
        shell: `script -qec 'node "$A3S_CLI" run pick' /dev/null`,
        keepStdinOpen: true,
      });
      await eventually(async () => child.stdout.includes('pick 1-2> '), 'the first prompt');
      expect(child.stdout).toContain('[question] Which color?');
      expect(child.stdout).toMatch(/ {2}1\. red\r?\n {2}2\. blue/);
      // Words to a question that takes options only: asked again.
      child.child.stdin.write('purple\n');
      await eventually(async () => child.stdout.includes('pick a number from 1 to 2'), 'the second try');
      child.child.stdin.write('2\n');
      await eventually(async () => child.stdout.includes('answer> '), 'the free-text prompt');
      child.child.stdin.write('ship it\n');
      const result = await child.exited;
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('[question] answered: blue');
      expect(result.stdout).toContain('[question] answered: ship it');
      expect(result.stdout).toContain('Blue it is.');
      const last = fake.requests.at(-1);
      expect(toolResult(last, 'c_t1')).toBe('The user chose: blue');
      expect(toolResult(last, 'c_t2')).toBe('The user answered: ship it');
      fake.assertDone();
    },
  );

  it.skipIf(!hasScript)(
    'on a terminal a question nobody answers ends its prompt at its timeout; the run goes on',
    async () => {
      const policy = join(files, 'short-questions.json');
      writeFileSync(
        policy,
        JSON.stringify({
          permissionPolicy: { defaultDecision: 'allow' },
          confirmationPolicy: { defaultTimeoutMs: 700 },
        }),
      );
      fake.script(ask('c_late', { question: 'Still there?' }), { text: 'Went on alone.' });
      const child = startA3s(cli, [], {
        env: { ...env, A3S_CLI: cli, A3S_POLICY: policy },
        shell: `script -qec 'node "$A3S_CLI" run --policy "$A3S_POLICY" alone' /dev/null`,
        keepStdinOpen: true,
      });
      const result = await child.exited;
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('[question] Still there?');
      expect(result.stdout).toContain('[question] no answer within 0.7 s: the run goes on without one');
      expect(result.stdout).toContain('Went on alone.');
      expect(String(toolResult(fake.requests.at(-1), 'c_late'))).toMatch(/^no answer within 700 ms/);
      fake.assertDone();
    },
  );

  it('steer appends input at the next safe point; interrupt stops the active run; neither without a run', async () => {
    fake.script(
      { toolCalls: [{ id: 'c_s', name: 'bash', arguments: { command: 'sleep 3; echo slept' } }] },
      { text: 'steered' },
    );
    const running = startA3s(cli, ['run', 'take a nap'], { env });
    await eventually(
      async () => SESSION_LINE.test(running.stderr) && running.stderr.includes('[tool] bash'),
      'the nap',
    );
    const sessionId = SESSION_LINE.exec(running.stderr)![1]!;
    const steered = await runA3s(cli, ['steer', sessionId, 'then', 'say hi'], { env });
    expect(steered.code).toBe(0);
    expect(steered.stdout).toMatch(/^steer accepted/);
    const result = await running.exited;
    expect(result.code).toBe(0);
    const users = fake.requests
      .at(-1)!
      .body.messages.filter((m) => m.role === 'user')
      .map((m) => m.content);
    expect(users).toEqual(['take a nap', 'then say hi']);

    fake.script({ toolCalls: [{ id: 'c_i', name: 'bash', arguments: { command: 'sleep 3' } }] });
    const second = startA3s(cli, ['run', '--session', sessionId, 'nap again'], { env });
    await eventually(async () => second.stderr.includes('[tool] bash'), 'the second nap');
    const interrupted = await runA3s(cli, ['interrupt', sessionId, '--reason', 'enough'], { env });
    expect(interrupted.code).toBe(0);
    expect(interrupted.stdout).toMatch(/^interrupt accepted/);
    const stopped = await second.exited;
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toMatch(/cancelled: CANCELLED: enough/);

    const idle = await runA3s(cli, ['interrupt', sessionId], { env });
    expect(idle.code).toBe(1);
    expect(idle.stderr).toMatch(/^a3s: RUN_NOT_ACTIVE: /);
    const idleSteer = await runA3s(cli, ['steer', sessionId, 'hello?'], { env });
    expect(idleSteer.code).toBe(1);
    fake.assertDone();
  });
});

// `a3s revert` and `a3s unrevert` (issue 32) over HTTP with the real sandbox: what they print, the conflict's paths
// on stderr, --force, the exit codes (0 done, 1 refused by the server naming the code, 2 usage).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A3sClient, type RevertResponse } from '../../src/client/index.js';
import { bash, ownForSandbox } from '../changes/changes-helpers.js';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';
import { buildCli, removeCli, runA3s } from './a3s-process.js';

const HAVE_BWRAP = bwrapWorks();
if (!HAVE_BWRAP) console.warn('a3s revert tests skipped: bubblewrap (bwrap) is not installed');
const ODD = 'odd\nname.txt';

describe.skipIf(!HAVE_BWRAP)('a3s revert and a3s unrevert', () => {
  let cli: string;
  let t: TestServer;
  let env: Record<string, string>;
  let client: A3sClient;

  beforeAll(async () => {
    cli = buildCli();
    t = await startTestServer();
    env = { HOME: tempDir('a3s-home-'), A3S_URL: t.url };
    client = new A3sClient({ baseUrl: t.url });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    if (cli) removeCli(cli);
  });

  /** A session on a workspace holding `a.txt`, and one run that edits it and writes `made.txt`. */
  async function sessionWithRun(name: string): Promise<{ ws: string; sessionId: string; runId: string }> {
    const ws = join(t.root, name);
    mkdirSync(ws, { recursive: true });
    writeFileSync(join(ws, 'a.txt'), 'a0\n');
    ownForSandbox(t, ws);
    const session = await client.session(ws);
    t.fake.script(
      {
        toolCalls: [
          { id: 'w1', name: 'write', arguments: { file_path: 'made.txt', content: 'made\n' } },
          bash('b1', 'echo a1 > a.txt'),
        ],
      },
      { text: 'done' },
    );
    await session.send('change things');
    return { ws, sessionId: session.sessionId, runId: (await session.runs()).at(-1)!.runId };
  }
  const read = (ws: string, path: string) => readFileSync(join(ws, path), 'utf8');

  it('revert prints the paths it wrote or removed, unrevert puts them back; --json is the answer; refusals exit 1', async () => {
    const { ws, sessionId, runId } = await sessionWithRun('cli-revert');
    const messages = (await (await client.getSession(sessionId)).info()).messageCount;

    const reverted = await runA3s(cli, ['revert', sessionId, runId], { env });
    expect(reverted).toMatchObject({ code: 0, stdout: 'restored\ta.txt\ndeleted\tmade.txt\n' });
    expect(reverted.stderr).toBe(
      `[revert] reverted run ${runId}: 2 files written or removed, ${messages} messages hidden from the model\n`,
    );
    expect(read(ws, 'a.txt')).toBe('a0\n');
    expect(existsSync(join(ws, 'made.txt'))).toBe(false);
    expect((await (await client.getSession(sessionId)).info()).reverted?.runIds).toEqual([runId]);

    const twice = await runA3s(cli, ['revert', sessionId, runId], { env });
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/^a3s: REVERT_UNAVAILABLE: run \S+ cannot be reverted: it is already reverted/);

    const back = await runA3s(cli, ['unrevert', sessionId, '--json'], { env });
    expect(back.code).toBe(0);
    const answer = JSON.parse(back.stdout) as RevertResponse;
    expect(answer).toMatchObject({ run_id: runId, reverted_run_ids: [runId], messages });
    expect(answer.files).toEqual([
      { path: 'a.txt', action: 'restored' },
      { path: 'made.txt', action: 'restored' },
    ]);
    expect(back.stderr).toBe('');
    expect(read(ws, 'a.txt')).toBe('a1\n');
    expect(read(ws, 'made.txt')).toBe('made\n');

    const nothing = await runA3s(cli, ['unrevert', sessionId], { env });
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toMatch(/^a3s: NOTHING_REVERTED: session \S+ has nothing reverted/);
    expect(nothing.stdout).toBe('');
    const missing = await runA3s(cli, ['revert', sessionId, 'run_nope'], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^a3s: RUN_NOT_FOUND: /);
    t.fake.assertDone();
  });

  it('a conflict exits 1 listing the paths changed since (odd names quoted), writes nothing; --force writes', async () => {
    const { ws, sessionId, runId } = await sessionWithRun('cli-conflict');
    writeFileSync(join(ws, 'a.txt'), 'a person edited this\n');
    writeFileSync(join(ws, ODD), 'a file with a newline in its name\n');
    ownForSandbox(t, ws);
    // A run that only adds the odd file: after the person's edits above, the capture takes them as the run's.
    const session = await client.getSession(sessionId);
    t.fake.script({ toolCalls: [bash('b2', `printf more >> '${ODD}'`)] }, { text: 'more' });
    await session.send('touch the odd file');
    const second = (await session.runs()).at(-1)!.runId;
    writeFileSync(join(ws, ODD), 'edited by a person again\n');
    writeFileSync(join(ws, 'made.txt'), 'and this one\n');

    const refused = await runA3s(cli, ['revert', sessionId, runId], { env });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    const lines = refused.stderr.split('\n');
    expect(lines[0]).toMatch(/^a3s: REVERT_CONFLICT: 2 paths were changed since the last capture/);
    expect(lines.slice(1)).toEqual([
      'changed since the last capture (2 paths):',
      '  made.txt',
      `  ${JSON.stringify(ODD)}`,
      '"a3s revert --force" writes them anyway.',
      '',
    ]);
    expect(read(ws, 'made.txt')).toBe('and this one\n');
    expect(read(ws, ODD)).toBe('edited by a person again\n');
    expect((await session.info()).reverted).toBeUndefined();

    const forced = await runA3s(cli, ['revert', sessionId, runId, '--force'], { env });
    expect(forced.code).toBe(0);
    expect(forced.stdout).toBe(`restored\ta.txt\ndeleted\tmade.txt\ndeleted\t${JSON.stringify(ODD)}\n`);
    expect(forced.stderr).toMatch(new RegExp(`^\\[revert\\] reverted run ${runId} and 1 later run: 3 files`));
    expect(read(ws, 'a.txt')).toBe('a0\n');
    expect(existsSync(join(ws, ODD))).toBe(false);
    expect((await session.info()).reverted?.runIds).toEqual([runId, second]);

    writeFileSync(join(ws, 'made.txt'), 'made again by a person\n');
    const unrevertRefused = await runA3s(cli, ['unrevert', sessionId], { env });
    expect(unrevertRefused.code).toBe(1);
    expect(unrevertRefused.stderr).toMatch(
      /^a3s: REVERT_CONFLICT: .*\nchanged since the last capture \(1 path\):\n {2}made\.txt\n"a3s unrevert --force" writes it anyway\.\n$/,
    );
    const unforced = await runA3s(cli, ['unrevert', sessionId, '--force'], { env });
    expect(unforced.code).toBe(0);
    expect(unforced.stderr).toMatch(/^\[unrevert\] put back run \S+ and 1 later run: 3 files written or removed, /);
    expect(read(ws, 'made.txt')).toBe('made\n');
    expect(read(ws, ODD)).toBe('a file with a newline in its name\nmore');
    expect(read(ws, 'a.txt')).toBe('a person edited this\n');
    t.fake.assertDone();
  });

  it('usage errors exit 2 with a hint; typos of the commands and flags are named', async () => {
    for (const [args, message] of [
      [['revert', 's1'], /^a3s: missing RUN\nRun "a3s revert --help" for usage\.\n$/],
      [['revert'], /^a3s: missing SESSION RUN\n/],
      [['unrevert'], /^a3s: missing SESSION\nRun "a3s unrevert --help" for usage\.\n$/],
      [['revert', 's1', 'r1', 'r2'], /^a3s: unexpected argument "r2"/],
      [['unrevert', 's1', 'r1'], /^a3s: unexpected argument "r1"/],
      [['revert', 's1', 'r1', '--forse'], /^a3s: Unknown option '--forse' \(did you mean --force\?\)/],
      [['unrevert', 's1', '--force=yes'], /^a3s: Option '--force' does not take an argument/],
      [['revrt', 's1', 'r1'], /^a3s: unknown command "revrt" \(did you mean revert\?\)/],
      [['unrevrt', 's1'], /^a3s: unknown command "unrevrt" \(did you mean unrevert\?\)/],
    ] as const) {
      const result = await runA3s(cli, args, { env });
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toMatch(message);
    }
    const help = await runA3s(cli, ['revert', '--help'], { env });
    expect(help).toMatchObject({ code: 0 });
    expect(help.stdout).toContain('REVERT_CONFLICT');
    expect((await runA3s(cli, ['--help'], { env })).stdout).toContain('unrevert SESSION');
  });
});

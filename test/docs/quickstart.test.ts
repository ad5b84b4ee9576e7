import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, removeCli } from '../cli/a3s-process.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { tempDir } from '../support/test-server.js';

const REPO = process.cwd();
const VITE_NODE = join(REPO, 'node_modules', 'vite-node', 'vite-node.mjs');
const README_PORT = 8080;

/** The shell blocks of README's "A first session with curl", in order, each split into its command lines. */
function quickstartCommands(readme: string): string[] {
  const start = readme.indexOf('## A first session with curl');
  const end = readme.indexOf('\n## ', start + 1);
  expect(start, 'README has the quickstart section').toBeGreaterThan(0);
  const section = readme.slice(start, end);
  expect(section).toContain('<!-- quickstart:run -->');
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  return blocks.flatMap((block) => block.split('\n').filter((line) => line.trim() !== ''));
}

/** Whether nothing listens on the port, so the server can take README's own address. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

interface Started {
  kill(): void;
  output(): string;
  exited: Promise<number | null>;
}

/** Run one README line in bash, `npx a3s` meaning the CLI built from this checkout; cwd is the user's directory. */
function runLine(line: string, env: Record<string, string>, cwd: string, cli: string): Started {
  const npx = `npx() { if [ "$1" = a3s ]; then shift; node ${JSON.stringify(cli)} "$@"; else command npx "$@"; fi; }`;
  const child = spawn('bash', ['-c', `${npx}\n${line}`], { cwd, env, detached: true });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return {
    kill: () => {
      if (child.exitCode === null && child.pid !== undefined) process.kill(-child.pid, 'SIGINT');
    },
    output: () => out,
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
  };
}

async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * README's quickstart, followed as a newcomer would: the server started as `npm start` starts it (the built entry
 * run from source here, in an empty directory, with only the environment README gives plus OPENAI_BASE_URL at the
 * test's strict fake provider), then every command line of the quickstart's blocks run as written in bash. When
 * port 8080 is taken on this machine the server listens elsewhere and `localhost:8080` in the lines (and the CLI's
 * default URL, through A3S_URL) point there instead: the only rewrite.
 */
describe("README's first session, verbatim", () => {
  let fake: FakeProvider;
  let cli: string;
  let server: Started | undefined;
  let userDir: string;
  let url: string;
  let rewrite: (line: string) => string;
  const env: Record<string, string> = {};

  beforeAll(async () => {
    fake = await startFakeProvider();
    cli = buildCli();
    userDir = tempDir('a3s-quickstart-');
    writeFileSync(join(userDir, 'notes.txt'), 'hello\n');
    const readmePort = await portFree(README_PORT);
    Object.assign(env, {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: tempDir('a3s-quickstart-home-'),
      OPENAI_API_KEY: 'sk-quickstart',
      OPENAI_BASE_URL: fake.baseUrl,
    });
    const child = spawn(process.execPath, [VITE_NODE, join(REPO, 'src', 'main.ts')], {
      cwd: userDir,
      env: { ...env, ...(readmePort ? {} : { A3S_PORT: '0' }) },
      detached: true,
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    server = {
      kill: () => {
        if (child.exitCode === null && child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      },
      output: () => out,
      exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
    };
    await until(() => /"url":"http:\/\/[^"]+"/.test(out) || child.exitCode !== null, 'the server to listen', 60_000);
    const match = /"url":"(http:\/\/[^"]+)"/.exec(out);
    if (!match?.[1]) throw new Error(`the server did not start: ${out}`);
    url = match[1];
    const port = new URL(url).port;
    rewrite = readmePort ? (line) => line : (line) => line.replaceAll(`localhost:${README_PORT}`, `127.0.0.1:${port}`);
    if (!readmePort) env.A3S_URL = url;
  }, 120_000);

  afterAll(async () => {
    server?.kill();
    await server?.exited;
    if (cli) removeCli(cli);
    await fake?.close();
  });

  it('creates the session, runs it to an answer and follows its events over SSE and the CLI', async () => {
    const lines = quickstartCommands(readFileSync(join(REPO, 'README.md'), 'utf8'));
    expect(lines.length).toBeGreaterThanOrEqual(4);
    // The model lists the directory the server runs in (README: the default workspace root), then answers.
    fake.script(
      { toolCalls: [{ name: 'ls', arguments: { path: '.' } }] },
      {
        text: 'The directory holds notes.txt.',
        expect: (request) => expect(JSON.stringify(request.body.messages)).toContain('notes.txt'),
      },
    );
    const following: Array<{ line: string; run: Started }> = [];
    for (const raw of lines) {
      const line = rewrite(raw);
      const run = runLine(line, env, userDir, cli);
      if (/ -N |--follow/.test(line)) {
        following.push({ line, run });
        continue;
      }
      const code = await run.exited;
      expect(code, `${line}\n${run.output()}`).toBe(0);
      if (line.includes('/runs')) {
        const body = JSON.parse(run.output()) as { run?: { status?: string }; result?: { text?: string } };
        expect(body.run?.status, run.output()).toBe('completed');
        expect(body.result?.text).toBe('The directory holds notes.txt.');
      } else if (line.includes('/v1/sessions ')) {
        // The embedded default: the directory the server was started in is the workspace, the file store keeps it.
        expect(JSON.parse(run.output())).toMatchObject({
          session: { id: 'demo', workspace: userDir, sessionStore: 'file' },
        });
      }
    }
    expect(following).toHaveLength(2);
    for (const { line, run } of following) {
      // Both replay the session from its start: the finished run's agent_end is there, then they wait for more.
      await until(() => run.output().includes('agent_end'), `agent_end from: ${line}\n${run.output()}`);
      expect(run.output()).toContain('notes.txt');
      expect(run.output()).not.toMatch(/^(a3s|curl): /m);
      run.kill();
      await run.exited;
    }
    // README: "sessions are saved under ./.a3s/sessions" (the session asked for autoSave).
    expect(readdirSync(join(userDir, '.a3s', 'sessions'), { recursive: true }).join('\n')).toContain('demo');
    fake.assertDone();
  }, 120_000);
});

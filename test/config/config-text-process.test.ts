import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { listening, startMain, type MainProcess } from '../support/main-process.js';
import { tempDir } from '../support/test-server.js';

const SEED_ACL = readFileSync(join(process.cwd(), 'test', 'fixtures', 'config', 'seed-contract.acl'), 'utf8');

/** The pino lines of a process's stdout, parsed. */
function logLines(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('the server process with A3S_CONFIG_TEXT', () => {
  const procs: MainProcess[] = [];
  let fake: FakeProvider | undefined;
  afterEach(async () => {
    for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await fake?.close();
    fake = undefined;
  });

  it('starts from inline ACL, warns at start about seed keys it does not use yet, and runs against the provider', async () => {
    fake = await startFakeProvider();
    const dir = tempDir('a3s-text-proc-');
    const acl = `${SEED_ACL.replace('http://127.0.0.1:4000', fake.rootUrl).replace('/var/lib/a3s/sessions', join(dir, 'sessions'))}
task_scheduler { max_active = 4 }
auto_parallel = true
`;
    const proc = startMain({
      A3S_CONFIG_TEXT: acl,
      A3S_PORT: '0',
      A3S_DATA_DIR: join(dir, 'data'),
      A3S_WORKSPACE_ROOTS: dir,
    });
    procs.push(proc);
    const url = await listening(proc);
    const warnings = logLines(proc.stdout).filter((line) => line.level === 40);
    expect(warnings.map((w) => [w.configKey, w.msg])).toEqual([
      ['task_scheduler', 'task_scheduler is accepted for compatibility with A3S Code but not used by this server yet'],
      ['auto_parallel', 'auto_parallel is accepted for compatibility with A3S Code but not used by this server yet'],
    ]);
    const listeningLine = logLines(proc.stdout).find((line) => line.msg === 'A3S Code Server listening');
    expect(listeningLine).toMatchObject({
      model: 'openai/docs-fake',
      provider: 'openai',
      providerUrl: `${fake.rootUrl}/v1/chat/completions`,
      store: 'file',
      auth: 'none: bound to loopback only, every caller has every scope',
      workspaceRoots: [dir],
    });
    expect(listeningLine?.sandbox).toMatch(/^(bwrap|none) \(mode /);
    fake.script({ text: 'inline ok' });
    const created = await request(url).post('/v1/sessions').send({}).expect(201);
    const run = await request(url)
      .post(`/v1/sessions/${created.body.session.id as string}/runs`)
      .send({ input: 'hi', wait: true })
      .expect(200);
    expect(run.body.result.text).toBe('inline ok');
    fake.assertDone();
    expect(fake.requests[0]?.body.model).toBe('docs-fake');
  });

  it('without workspace_roots, warns at start that sessions work in its own working directory, naming it', async () => {
    const dir = tempDir('a3s-text-proc-');
    const proc = startMain({
      A3S_CONFIG_TEXT: SEED_ACL.replace('/var/lib/a3s/sessions', join(dir, 'sessions')),
      A3S_PORT: '0',
      A3S_DATA_DIR: join(dir, 'data'),
    });
    procs.push(proc);
    await listening(proc);
    const lines = logLines(proc.stdout);
    expect(lines.filter((line) => line.level === 40).map((line) => line.msg)).toContain(
      `the workspace root is this server's working directory ${process.cwd()} (the default of workspace_roots): sessions work there unless they name another directory; set workspace_roots or A3S_WORKSPACE_ROOTS`,
    );
    expect(lines.find((line) => line.msg === 'A3S Code Server listening')?.workspaceRoots).toEqual([process.cwd()]);
  });

  it('refuses to start when A3S_CONFIG_TEXT and A3S_CONFIG are both set', async () => {
    const dir = tempDir('a3s-text-proc-');
    const file = join(dir, 'a3s.acl');
    writeFileSync(file, SEED_ACL);
    const proc = startMain({
      A3S_CONFIG_TEXT: SEED_ACL,
      A3S_CONFIG: file,
      A3S_PORT: '0',
      A3S_DATA_DIR: join(dir, 'data'),
    });
    procs.push(proc);
    expect(await proc.exited).toBe(2);
    expect(proc.stderr).toContain(
      'A3S_CONFIG_TEXT: both A3S_CONFIG_TEXT (inline ACL text) and A3S_CONFIG (a config file) are set; set only one of them',
    );
  });
});

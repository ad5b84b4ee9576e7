import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { openSse } from '../support/sse-client.js';
import { backendConfig, SESSION_BACKENDS } from '../support/redis-target.js';
import { startTestServer, tempDir, writeFiles, type TestServer } from '../support/test-server.js';

const A = 'token-instr-tenant-a-000001';
const B = 'token-instr-tenant-b-000001';
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const TOKENS = [
  { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
  { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
];

// A marker in this process's environment (set before the server starts), and what /proc/self/environ holds:
// the server runs in this process, so none of it may reach a provider, a warning or an event.
const MARKER = `A3S_INSTR_MARKER_${randomUUID()}`;
process.env.A3S_INSTRUCTION_FILES_MARKER = MARKER;
const ENVIRON = readFileSync('/proc/self/environ', 'utf8')
  .split('\0')
  .filter((entry) => entry.indexOf('=') > 0 && entry.slice(entry.indexOf('=') + 1).length >= 8);
const B_SECRET = `TENANT-B-SECRET-${randomUUID()}`;
const DATA_SECRET = `DATA-DIR-SECRET-${randomUUID()}`;
const OPERATOR_RULES = `OPERATOR-ROOT-RULES-${randomUUID()}`;

/**
 * A child process swapping `<dir>/<name>` between a regular file (`content`) and a symlink to each of `targets`
 * in turn, by rename(2) over it (what `mv -T` does), until `ms` passed; prints "go" once it runs.
 */
const SWAP_SCRIPT = `
const fs = require('node:fs');
const path = require('node:path');
const [dir, name, content, ms, ...targets] = process.argv.slice(1);
const file = path.join(dir, name);
const real = path.join(dir, '.swap-real');
const link = path.join(dir, '.swap-link');
const end = Date.now() + Number(ms);
// Half of the swaps at once, half after a pause of up to 1 ms: on a loaded machine either state is seen.
const pause = new Int32Array(new SharedArrayBuffer(4));
const rest = () => Math.random() < 0.5 || Atomics.wait(pause, 0, 0, Math.random());
for (let i = 0; Date.now() < end; i++) {
  fs.writeFileSync(real, content);
  fs.renameSync(real, file);
  rest();
  fs.rmSync(link, { force: true });
  fs.symlinkSync(targets[i % targets.length], link);
  fs.renameSync(link, file);
  rest();
}
fs.writeFileSync(real, content);
fs.renameSync(real, file);
`;

/** Starts the swap loop; resolves once the name was seen as a symlink (the loop runs), with a promise of its end. */
async function swapLoop(
  dir: string,
  name: string,
  content: string,
  ms: number,
  targets: string[],
): Promise<{ ended: Promise<void> }> {
  const child = spawn(process.execPath, ['-e', SWAP_SCRIPT, dir, name, content, String(ms), ...targets], {
    stdio: 'inherit',
  });
  let exit: number | null | undefined;
  const ended = new Promise<void>((resolve, reject) =>
    child.on('exit', (code) => {
      exit = code;
      if (code === 0) resolve();
      else reject(new Error(`swap loop exited with ${code}`));
    }),
  );
  ended.catch(() => undefined);
  while (!lstatSync(join(dir, name)).isSymbolicLink()) {
    if (exit !== undefined) await ended;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  // Not the promise itself: an async function returning it would wait for it.
  return { ended };
}

interface Created {
  status: number;
  id: string;
  initWarning: string | null;
  text: string;
}

/** Every secret this file plants, as text a leak would contain. */
function leaks(text: string): string[] {
  return [MARKER, B_SECRET, DATA_SECRET, OPERATOR_RULES, ...ENVIRON].filter((secret) => text.includes(secret));
}

for (const backend of SESSION_BACKENDS)
  describe(`instruction files are read confined by what was opened (tenants split; ${backend})`, () => {
    let t: TestServer;
    let fake: FakeProvider;
    let root: string;
    let home: string;
    let dataDir: string;

    beforeAll(async () => {
      root = tempDir('a3s-instr-');
      dataDir = tempDir('a3s-instr-data-');
      home = join(root, 'tenant-a');
      mkdirSync(home, { mode: 0o700 });
      mkdirSync(join(root, 'tenant-b'), { mode: 0o700 });
      writeFileSync(join(root, 'tenant-b', 'secret.md'), B_SECRET);
      writeFileSync(join(dataDir, 'secret.json'), DATA_SECRET);
      // The operator's repository above the tenants' directories: its AGENTS.md is never read for a tenant.
      mkdirSync(join(root, '.git'));
      writeFileSync(join(root, 'AGENTS.md'), OPERATOR_RULES);
      fake = await startFakeProvider({ repeat: { text: 'ok' } });
      t = await startTestServer({
        root,
        dataDir,
        fake,
        config: { apiTokens: TOKENS, ...backendConfig(backend, 'instr') },
      });
    });
    afterAll(async () => {
      await t.close();
      await fake.close();
    });

    async function create(token: string, body: Record<string, unknown>): Promise<Created> {
      const res = await request(t.url).post('/v1/sessions').set(auth(token)).send(body);
      const session = (res.body as { session?: { id: string; initWarning: string | null } }).session;
      return { status: res.status, id: session?.id ?? '', initWarning: session?.initWarning ?? null, text: res.text };
    }

    /** The system prompt the provider received for one run of the session. */
    async function systemPrompt(token: string, id: string): Promise<string> {
      const probe = `probe-${randomUUID()}`;
      await request(t.url)
        .post(`/v1/sessions/${id}/runs`)
        .set(auth(token))
        .send({ input: probe, wait: true })
        .expect(200);
      const sent = fake.requests.find((req) => JSON.stringify(req.body.messages).includes(probe));
      if (!sent) throw new Error(`the provider got no request for ${probe}`);
      const system = sent.body.messages.find((message) => message.role === 'system');
      return String(system?.content ?? '');
    }

    /** The `workspace_warning` events of a session that ran once (they are emitted when it is built, before the run). */
    async function workspaceWarnings(token: string, id: string) {
      const sse = await openSse(`${t.url}/v1/sessions/${id}/events?after=0`, auth(token));
      try {
        await sse.waitFor((e) => e.type === 'agent_end', 5000);
        return sse.events().filter((e) => e.type === 'workspace_warning');
      } finally {
        sse.abort();
      }
    }

    /** A workspace in tenant A's directory whose AGENTS.md is `link` (a symlink), and what a session there got. */
    async function linkedAgentsMd(name: string, target: string) {
      const ws = join(home, name);
      mkdirSync(ws, { recursive: true });
      symlinkSync(target, join(ws, 'AGENTS.md'));
      const created = await create(A, { workspace: name });
      expect(created.status, created.text).toBe(201);
      const prompt = await systemPrompt(A, created.id);
      const events = await workspaceWarnings(A, created.id);
      return { created, prompt, events };
    }

    it('ln -s /proc/self/environ AGENTS.md: skipped with a warning and an event; nothing of the environment reaches the provider', async () => {
      expect(ENVIRON.length).toBeGreaterThan(0);
      const { created, prompt, events } = await linkedAgentsMd('env', '/proc/self/environ');
      expect(leaks(prompt)).toEqual([]);
      expect(prompt).not.toContain('<agents_md');
      expect(created.initWarning).toContain('AGENTS.md "AGENTS.md" was skipped');
      expect(created.initWarning).toContain('/proc/self/environ');
      expect(leaks(created.text)).toEqual([]);
      expect(events.map((e) => e.payload)).toEqual([
        {
          kind: 'skipped',
          workspace: join(home, 'env'),
          path: 'AGENTS.md',
          message: expect.stringContaining('/proc/self/environ'),
        },
      ]);
      expect(leaks(JSON.stringify(events))).toEqual([]);
    });

    it("AGENTS.md linking to another tenant's file (absolute, relative, through a linked directory) or to the data dir is skipped", async () => {
      const cases: Array<[string, string]> = [
        ['cross-abs', join(root, 'tenant-b', 'secret.md')],
        ['cross-rel', '../../tenant-b/secret.md'],
        ['data', join(dataDir, 'secret.json')],
        ['proc-fd', '/proc/self/cwd/../../../../../../../../proc/self/environ'],
      ];
      for (const [name, target] of cases) {
        const { created, prompt, events } = await linkedAgentsMd(name, target);
        expect({ name, leaks: leaks(prompt + created.text + JSON.stringify(events)) }).toEqual({ name, leaks: [] });
        expect(created.initWarning, name).toContain('was skipped');
        expect(
          events.map((e) => e.payload.kind),
          name,
        ).toEqual(['skipped']);
      }
      // A directory on the way that leads to the other tenant: AGENTS.md -> docs/secret.md, docs -> tenant-b.
      const ws = join(home, 'cross-dir');
      mkdirSync(ws);
      symlinkSync(join(root, 'tenant-b'), join(ws, 'docs'));
      symlinkSync('docs/secret.md', join(ws, 'AGENTS.md'));
      const created = await create(A, { workspace: 'cross-dir' });
      expect(leaks((await systemPrompt(A, created.id)) + created.text)).toEqual([]);
      expect(created.initWarning).toContain('was skipped');
    });

    it('an AGENTS.md that is a FIFO or a directory is skipped (never waited on)', async () => {
      mkdirSync(join(home, 'fifo'));
      execFileSync('mkfifo', [join(home, 'fifo', 'AGENTS.md')]);
      const fifo = await create(A, { workspace: 'fifo' });
      expect(fifo.status).toBe(201);
      expect(fifo.initWarning).toContain('a FIFO, not a regular file');
      mkdirSync(join(home, 'dir', 'AGENTS.md'), { recursive: true });
      const dir = await create(A, { workspace: 'dir' });
      expect(dir.initWarning).toContain('a directory, not a regular file');
    });

    it('legit: the chain from a git root above the workspace inside the tenant dir, an in-workspace relative link, a link inside the tenant dir', async () => {
      writeFiles(home, {
        'repo/.git/HEAD': 'ref: refs/heads/main\n',
        'repo/AGENTS.md': 'REPO RULES',
        'repo/pkg/docs/AGENTS.md': 'PKG RULES',
        'shared-rules.md': 'TENANT SHARED RULES',
      });
      symlinkSync('docs/AGENTS.md', join(home, 'repo', 'pkg', 'AGENTS.md'));
      const repo = await create(A, { workspace: 'repo/pkg' });
      expect(repo.initWarning).toBeNull();
      const prompt = await systemPrompt(A, repo.id);
      expect(prompt).toContain(
        '<agents_md path="../AGENTS.md">\nREPO RULES\n</agents_md>\n\n<agents_md path="AGENTS.md">\nPKG RULES\n</agents_md>',
      );
      expect((await workspaceWarnings(A, repo.id)).length).toBe(0);

      // No repository in the tenant's directory, the operator's above it: the chain starts at the tenant's directory.
      writeFiles(home, { 'plain/AGENTS.md': 'PLAIN RULES', 'plain/sub/README': 'x' });
      symlinkSync('../../shared-rules.md', join(home, 'plain', 'sub', 'AGENTS.md'));
      const plain = await create(A, { workspace: 'plain/sub' });
      expect(plain.initWarning).toBeNull();
      const plainPrompt = await systemPrompt(A, plain.id);
      expect(plainPrompt).toContain(
        '<agents_md path="../AGENTS.md">\nPLAIN RULES\n</agents_md>\n\n<agents_md path="AGENTS.md">\nTENANT SHARED RULES\n</agents_md>',
      );
      expect(leaks(plainPrompt)).toEqual([]);
    });

    it("one tenant never gets another's AGENTS.md for the same requested workspace (the 2 s cache is per tenant)", async () => {
      writeFiles(home, { 'same/AGENTS.md': 'RULES OF A' });
      writeFiles(join(root, 'tenant-b'), { 'same/AGENTS.md': 'RULES OF B' });
      const [a, b] = await Promise.all([create(A, { workspace: 'same' }), create(B, { workspace: 'same' })]);
      const [promptA, promptB] = await Promise.all([systemPrompt(A, a.id), systemPrompt(B, b.id)]);
      expect(promptA).toContain('RULES OF A');
      expect(promptA).not.toContain('RULES OF B');
      expect(promptB).toContain('RULES OF B');
      expect(promptB).not.toContain('RULES OF A');
    });

    it('skill and agent directories with links to outside files are refused; links inside still work', async () => {
      writeFiles(home, {
        'dirs/skills/ok.md': '---\ndescription: fine\n---\nok',
        'dirs/agents/real.md': '---\nname: real\ndescription: d\n---\nYou are real.',
        'dirs/agents/targets/second.md': '---\nname: second\ndescription: d\n---\nYou are second.',
        'dirs/docs/x.md': 'a workspace file outside the agent dir',
      });
      const ws = join(home, 'dirs');
      symlinkSync('targets/second.md', join(ws, 'agents', 'second.md'));
      const legit = await create(A, { workspace: 'dirs', skillDirs: ['skills'] });
      expect(legit.status, legit.text).toBe(201);

      const evil: Array<[string, string, string]> = [
        ['skills-env', 'leak.md', '/proc/self/environ'],
        ['skills-b', 'leak.md', join(root, 'tenant-b', 'secret.md')],
        ['skills-data', 'leak.md', join(dataDir, 'secret.json')],
        ['skills-procdir', 'proc', '/proc/self'],
      ];
      for (const [dir, name, target] of evil) {
        writeFiles(ws, { [`${dir}/fine.md`]: 'fine' });
        symlinkSync(target, join(ws, dir, name));
        const res = await create(A, { workspace: 'dirs', skillDirs: [dir] });
        expect({ dir, status: res.status, leaks: leaks(res.text) }).toEqual({ dir, status: 400, leaks: [] });
        expect(res.text, dir).toContain('a symlink leaving the skill directory is refused');
      }
      symlinkSync(join(root, 'tenant-b'), join(ws, 'skills-link'));
      const linkedDir = await create(A, { workspace: 'dirs', skillDirs: ['skills-link'] });
      expect(linkedDir.status).toBe(400);
      expect(linkedDir.text).toContain("outside the session's workspace");

      mkdirSync(join(ws, 'agents-evil'));
      symlinkSync('/proc/self/environ', join(ws, 'agents-evil', 'env.md'));
      mkdirSync(join(ws, 'agents-b'));
      symlinkSync(join(root, 'tenant-b', 'secret.md'), join(ws, 'agents-b', 'b.yaml'));
      mkdirSync(join(ws, 'agents-up'));
      symlinkSync('../docs/x.md', join(ws, 'agents-up', 'up.md'));
      for (const dir of ['agents-evil', 'agents-b', 'agents-up']) {
        const res = await create(A, { workspace: 'dirs', agentDirs: [dir] });
        expect({ dir, status: res.status, leaks: leaks(res.text) }).toEqual({ dir, status: 400, leaks: [] });
        expect(res.text, dir).toContain('a symlink leaving the agent directory is refused');
        const registered = await request(t.url)
          .post(`/v1/sessions/${legit.id}/agents/dirs`)
          .set(auth(A))
          .send({ path: dir });
        expect({ dir, status: registered.status, leaks: leaks(registered.text) }).toEqual({
          dir,
          status: 400,
          leaks: [],
        });
      }
      const ok = await request(t.url)
        .post(`/v1/sessions/${legit.id}/agents/dirs`)
        .set(auth(A))
        .send({ path: 'agents' })
        .expect(200);
      expect(ok.body.registered).toBe(2);
      symlinkSync(join(root, 'tenant-b'), join(ws, 'agents-link'));
      const outside = await request(t.url)
        .post(`/v1/sessions/${legit.id}/agents/dirs`)
        .set(auth(A))
        .send({ path: 'agents-link' });
      expect(outside.status).toBe(400);
      expect(outside.text).toContain("outside the session's workspace");
    });

    it('a swap loop (rename between a real AGENTS.md and links to secrets) racing 20 concurrent session creations: no secret gets through', async () => {
      const base = join(home, 'swap');
      mkdirSync(join(base, '.git'), { recursive: true });
      for (let i = 0; i < 20; i++) mkdirSync(join(base, `w${i}`));
      writeFileSync(join(base, 'AGENTS.md'), 'SWAP LEGIT RULES');
      const { ended } = await swapLoop(base, 'AGENTS.md', 'SWAP LEGIT RULES', 2300, [
        join(root, 'tenant-b', 'secret.md'),
        '../../tenant-b/secret.md',
        '/proc/self/environ',
        join(dataDir, 'secret.json'),
      ]);
      const created: Created[] = [];
      const until = Date.now() + 2000;
      // Each round spells the workspaces anew, so the 2 s workspace cache answers none of them: every creation reads the chain.
      for (let round = 0; Date.now() < until; round++) {
        created.push(
          ...(await Promise.all(
            Array.from({ length: 20 }, (_, i) => create(A, { workspace: `swap/w${i}${'/.'.repeat(round)}` })),
          )),
        );
      }
      await ended;
      expect(created.every((c) => c.status === 201)).toBe(true);
      expect(created.flatMap((c) => leaks(c.text))).toEqual([]);
      let legit = 0;
      let skipped = 0;
      for (let i = 0; i < created.length; i += 20) {
        const prompts = await Promise.all(created.slice(i, i + 20).map((c) => systemPrompt(A, c.id)));
        expect(prompts.flatMap(leaks)).toEqual([]);
        legit += prompts.filter((prompt) => prompt.includes('SWAP LEGIT RULES')).length;
      }
      skipped = created.filter((c) => c.initWarning?.includes('was skipped')).length;
      // The race ran both ways: some sessions got the real file, some found a link and skipped it; none got a secret.
      expect(created.length).toBeGreaterThanOrEqual(20);
      expect(legit).toBeGreaterThan(0);
      expect(skipped).toBeGreaterThan(0);
      expect(legit + skipped).toBe(created.length);
    });

    it("a swap loop on an agent definition racing POST .../agents/dirs: the other tenant's definition is never registered", async () => {
      writeFileSync(
        join(root, 'tenant-b', 'leaked.md'),
        `---\nname: leaked\ndescription: ${B_SECRET}\n---\n${B_SECRET}`,
      );
      writeFiles(home, { 'race/agents/mine.md': '---\nname: mine\ndescription: d\n---\nYou are mine.' });
      const session = await create(A, { workspace: 'race' });
      const { ended } = await swapLoop(
        join(home, 'race', 'agents'),
        'mine.md',
        '---\nname: mine\ndescription: d\n---\nYou are mine.',
        2000,
        [join(root, 'tenant-b', 'leaked.md')],
      );
      const answers: string[] = [];
      const until = Date.now() + 1800;
      while (Date.now() < until) {
        const batch = await Promise.all(
          Array.from({ length: 20 }, () =>
            request(t.url).post(`/v1/sessions/${session.id}/agents/dirs`).set(auth(A)).send({ path: 'agents' }),
          ),
        );
        answers.push(...batch.map((res) => `${res.status} ${res.text}`));
      }
      await ended;
      const listed = await request(t.url).get(`/v1/sessions/${session.id}/agents`).set(auth(A)).expect(200);
      expect(answers.length).toBeGreaterThanOrEqual(20);
      expect(answers.flatMap(leaks)).toEqual([]);
      expect(leaks(listed.text)).toEqual([]);
      expect(listed.text).not.toContain('leaked');
      expect(answers.some((answer) => answer.startsWith('200'))).toBe(true);
      expect(answers.some((answer) => answer.includes('a symlink leaving the agent directory is refused'))).toBe(true);
    });
  });

describe('instruction files without tenants split: confined to the workspace root', () => {
  let t: TestServer;
  let root: string;
  let outside: string;
  beforeAll(async () => {
    outside = tempDir('a3s-instr-outside-');
    writeFileSync(join(outside, 'secret.md'), B_SECRET);
    root = tempDir('a3s-instr-single-');
    writeFiles(root, { 'other/AGENTS.md': 'OTHER PROJECT RULES', 'proj/README': 'x', 'leak/README': 'x' });
    symlinkSync('../other/AGENTS.md', join(root, 'proj', 'AGENTS.md'));
    symlinkSync(join(outside, 'secret.md'), join(root, 'leak', 'AGENTS.md'));
    t = await startTestServer({ root, fake: await startFakeProvider({ repeat: { text: 'ok' } }) });
  });
  afterAll(async () => {
    await t.close();
    await t.fake.close();
  });

  it('a link to another directory inside the root is followed; one leaving the root is skipped', async () => {
    const proj = await request(t.url).post('/v1/sessions').send({ workspace: 'proj' }).expect(201);
    expect(proj.body.session.initWarning).toBeNull();
    const leak = await request(t.url).post('/v1/sessions').send({ workspace: 'leak' }).expect(201);
    expect(leak.body.session.initWarning).toContain(
      `a symbolic link leads to ${join(outside, 'secret.md')}, outside ${root}`,
    );
    for (const id of [proj.body.session.id as string, leak.body.session.id as string]) {
      await request(t.url)
        .post(`/v1/sessions/${id}/runs`)
        .send({ input: `probe ${id}`, wait: true })
        .expect(200);
    }
    const prompts = t.fake.requests.map((req) =>
      String(req.body.messages.find((message) => message.role === 'system')?.content ?? ''),
    );
    expect(
      prompts.some((prompt) => prompt.includes('<agents_md path="AGENTS.md">\nOTHER PROJECT RULES\n</agents_md>')),
    ).toBe(true);
    expect(prompts.flatMap(leaks)).toEqual([]);
  });
});

import { randomUUID } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider } from '../support/fake-provider.js';
import { openSse } from '../support/sse-client.js';
import { fileSwapBody, startSwapLoop } from '../support/swap-loop.js';
import { startTestServer, tempDir, writeFiles } from '../support/test-server.js';

// AGENTS.override.md, the fallback names and project_doc_max_bytes = 0 through the front door, with the
// attacks of instruction-files.test.ts aimed at the new names: every file of the chain is read confined.

const A = 'token-override-tenant-a-0001';
const B = 'token-override-tenant-b-0001';
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const TOKENS = [
  { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
  { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
];

const MARKER = `A3S_OVERRIDE_MARKER_${randomUUID()}`;
process.env.A3S_AGENTS_OVERRIDE_MARKER = MARKER;
const ENVIRON = readFileSync('/proc/self/environ', 'utf8')
  .split('\0')
  .filter((entry) => entry.indexOf('=') > 0 && entry.slice(entry.indexOf('=') + 1).length >= 8);
const B_SECRET = `TENANT-B-OVERRIDE-SECRET-${randomUUID()}`;
const DATA_SECRET = `DATA-DIR-OVERRIDE-SECRET-${randomUUID()}`;

/** Every planted secret a leak would contain. */
function leaks(text: string): string[] {
  return [MARKER, B_SECRET, DATA_SECRET, ...ENVIRON].filter((secret) => text.includes(secret));
}

interface Created {
  status: number;
  id: string;
  initWarning: string | null;
  text: string;
}

/** A server with tenants split (tenant-a, tenant-b), an operator fallback name, and what its sessions got. */
async function harness(config: Record<string, unknown>) {
  const root = tempDir('a3s-override-');
  const dataDir = tempDir('a3s-override-data-');
  const home = join(root, 'tenant-a');
  mkdirSync(home, { mode: 0o700 });
  mkdirSync(join(root, 'tenant-b'), { mode: 0o700 });
  writeFileSync(join(root, 'tenant-b', 'secret.md'), B_SECRET);
  writeFileSync(join(dataDir, 'secret.json'), DATA_SECRET);
  const fake = await startFakeProvider({ repeat: { text: 'ok' } });
  const t = await startTestServer({ root, dataDir, fake, config: { apiTokens: TOKENS, ...config } });

  async function create(body: Record<string, unknown>, token = A): Promise<Created> {
    const res = await request(t.url).post('/v1/sessions').set(auth(token)).send(body);
    const session = (res.body as { session?: { id: string; initWarning: string | null } }).session;
    return { status: res.status, id: session?.id ?? '', initWarning: session?.initWarning ?? null, text: res.text };
  }

  /** The system prompt the provider received for one run of the session. */
  async function systemPrompt(id: string): Promise<string> {
    const probe = `probe-${randomUUID()}`;
    await request(t.url).post(`/v1/sessions/${id}/runs`).set(auth(A)).send({ input: probe, wait: true }).expect(200);
    const sent = fake.requests.find((req) => JSON.stringify(req.body.messages).includes(probe));
    if (!sent) throw new Error(`the provider got no request for ${probe}`);
    return String(sent.body.messages.find((message) => message.role === 'system')?.content ?? '');
  }

  /** The `workspace_warning` events of a session that ran once. */
  async function workspaceWarnings(id: string) {
    const sse = await openSse(`${t.url}/v1/sessions/${id}/events?after=0`, auth(A));
    try {
      await sse.waitFor((e) => e.type === 'agent_end', 5000);
      return sse.events().filter((e) => e.type === 'workspace_warning');
    } finally {
      sse.abort();
    }
  }

  return {
    root,
    dataDir,
    home,
    create,
    systemPrompt,
    workspaceWarnings,
    close: async () => {
      await t.close();
      await fake.close();
    },
  };
}

describe('AGENTS.override.md and fallback names (tenants split, operator fallback CLAUDE.md)', () => {
  let h: Awaited<ReturnType<typeof harness>>;
  beforeAll(async () => {
    h = await harness({ projectDocFallbackFilenames: ['CLAUDE.md'] });
  });
  afterAll(async () => h.close());

  it('per directory the first non-empty of AGENTS.override.md, AGENTS.md, the fallbacks wins, along the chain', async () => {
    writeFiles(h.home, {
      'repo/.git/HEAD': 'ref: refs/heads/main\n',
      'repo/AGENTS.md': 'REPO AGENTS',
      'repo/AGENTS.override.md': 'REPO OVERRIDE',
      'repo/pkg/AGENTS.override.md': '  \n',
      'repo/pkg/AGENTS.md': 'PKG AGENTS',
      'repo/pkg/sub/CLAUDE.md': 'SUB CLAUDE',
      'repo/pkg/sub/AGENTS.md': '',
    });
    const created = await h.create({ workspace: 'repo/pkg/sub' });
    expect(created.status, created.text).toBe(201);
    expect(created.initWarning).toBeNull();
    const prompt = await h.systemPrompt(created.id);
    expect(prompt).toContain(
      [
        '<agents_md path="../../AGENTS.override.md">\nREPO OVERRIDE\n</agents_md>',
        '<agents_md path="../AGENTS.md">\nPKG AGENTS\n</agents_md>',
        '<agents_md path="CLAUDE.md">\nSUB CLAUDE\n</agents_md>',
      ].join('\n\n'),
    );
    expect(prompt).not.toContain('REPO AGENTS');
  });

  it("a session's projectDocFallbackFilenames replace the operator's; a path in it is a 400 naming the field", async () => {
    writeFiles(h.home, { 'fb/CLAUDE.md': 'OPERATOR FALLBACK', 'fb/RULES.md': 'SESSION FALLBACK' });
    const own = await h.create({ workspace: 'fb', projectDocFallbackFilenames: ['RULES.md'] });
    expect(own.status, own.text).toBe(201);
    const ownPrompt = await h.systemPrompt(own.id);
    expect(ownPrompt).toContain('<agents_md path="RULES.md">\nSESSION FALLBACK\n</agents_md>');
    expect(ownPrompt).not.toContain('OPERATOR FALLBACK');
    // Same workspace without the option within the cache's 2 s: the operator's list, not the cached answer.
    const operator = await h.create({ workspace: 'fb' });
    expect(await h.systemPrompt(operator.id)).toContain('OPERATOR FALLBACK');

    for (const bad of ['../tenant-b/secret.md', 'docs/x.md', '..', '/etc/passwd']) {
      const res = await h.create({ workspace: 'fb', projectDocFallbackFilenames: [bad] });
      expect({ bad, status: res.status }).toEqual({ bad, status: 400 });
      expect(res.text, bad).toContain('projectDocFallbackFilenames.0');
    }
  });

  it('AGENTS.override.md (or a fallback) linking to /proc/self/environ, another tenant, the data dir: skipped with the warning event; AGENTS.md still read', async () => {
    const cases: Array<[string, string, string]> = [
      ['ov-env', 'AGENTS.override.md', '/proc/self/environ'],
      ['ov-proc', 'AGENTS.override.md', '/proc/self/cwd/../../../../../../../../proc/self/environ'],
      ['ov-b-abs', 'AGENTS.override.md', join(h.root, 'tenant-b', 'secret.md')],
      ['ov-b-rel', 'AGENTS.override.md', '../../tenant-b/secret.md'],
      ['ov-data', 'AGENTS.override.md', join(h.dataDir, 'secret.json')],
      ['fb-env', 'CLAUDE.md', '/proc/self/environ'],
      ['fb-b', 'CLAUDE.md', join(h.root, 'tenant-b', 'secret.md')],
    ];
    for (const [name, file, target] of cases) {
      const ws = join(h.home, name);
      mkdirSync(ws);
      symlinkSync(target, join(ws, file));
      // With a fallback link there is no AGENTS.md, so the fallback is tried (and skipped).
      if (file === 'AGENTS.override.md') writeFileSync(join(ws, 'AGENTS.md'), `LEGIT ${name}`);
      const created = await h.create({ workspace: name });
      expect(created.status, created.text).toBe(201);
      const prompt = await h.systemPrompt(created.id);
      const events = await h.workspaceWarnings(created.id);
      expect({ name, leaks: leaks(prompt + created.text + JSON.stringify(events)) }).toEqual({ name, leaks: [] });
      expect(created.initWarning, name).toContain(`AGENTS.md "${file}" was skipped`);
      expect(
        events.map((e) => e.payload),
        name,
      ).toEqual([{ kind: 'skipped', workspace: ws, path: file, message: expect.stringContaining('was skipped') }]);
      if (file === 'AGENTS.override.md') expect(prompt, name).toContain(`<agents_md path="AGENTS.md">\nLEGIT ${name}`);
      else expect(prompt, name).not.toContain('<agents_md');
    }
  });

  it('a mv -T swap loop of AGENTS.override.md with links to secrets while sessions read the chain: no secret gets through', async () => {
    const base = join(h.home, 'swap');
    mkdirSync(join(base, '.git'), { recursive: true });
    for (let i = 0; i < 10; i++) mkdirSync(join(base, `w${i}`));
    writeFileSync(join(base, 'AGENTS.override.md'), 'SWAP LEGIT OVERRIDE');
    linkSync(join(base, 'AGENTS.override.md'), join(base, '.keep-AGENTS.override.md'));
    const loop = startSwapLoop(
      base,
      fileSwapBody(
        'AGENTS.override.md',
        [
          join(h.root, 'tenant-b', 'secret.md'),
          '../../tenant-b/secret.md',
          '/proc/self/environ',
          join(h.dataDir, 'secret.json'),
        ],
        0.002,
      ),
    );
    const created: Created[] = [];
    try {
      const until = Date.now() + 3000;
      // Each round spells the workspaces anew, so the 2 s workspace cache answers none: every creation reads the chain.
      for (let round = 0; Date.now() < until; round++) {
        created.push(
          ...(await Promise.all(
            Array.from({ length: 10 }, (_, i) => h.create({ workspace: `swap/w${i}${'/.'.repeat(round)}` })),
          )),
        );
      }
    } finally {
      expect(await loop.stop()).toBeGreaterThan(0);
    }
    expect(created.every((c) => c.status === 201)).toBe(true);
    expect(created.flatMap((c) => leaks(c.text))).toEqual([]);
    let legit = 0;
    for (let i = 0; i < created.length; i += 10) {
      const prompts = await Promise.all(created.slice(i, i + 10).map((c) => h.systemPrompt(c.id)));
      expect(prompts.flatMap(leaks)).toEqual([]);
      legit += prompts.filter((prompt) => prompt.includes('SWAP LEGIT OVERRIDE')).length;
    }
    const skipped = created.filter((c) => c.initWarning?.includes('was skipped')).length;
    expect(created.length).toBeGreaterThanOrEqual(10);
    expect(legit).toBeGreaterThan(0);
    // The race ran both ways: a session got the real file, or found a link (or FIFO) and skipped it; none got a secret.
    expect(skipped).toBeGreaterThan(0);
    expect(legit + skipped).toBe(created.length);
  });
});

describe("user_instructions_dir: the operator's personal instructions come first", () => {
  let h: Awaited<ReturnType<typeof harness>>;
  let personal: string;
  beforeAll(async () => {
    personal = tempDir('a3s-override-personal-');
    writeFileSync(join(personal, 'AGENTS.override.md'), 'OPERATOR PERSONAL RULES');
    writeFileSync(join(personal, 'AGENTS.md'), 'SHADOWED BY THE OVERRIDE');
    h = await harness({ userInstructionsDir: personal });
  });
  afterAll(async () => h.close());

  it("every tenant's session gets them before its own chain", async () => {
    writeFiles(h.home, { 'p/AGENTS.md': 'TENANT RULES' });
    const created = await h.create({ workspace: 'p' });
    expect(created.status, created.text).toBe(201);
    const prompt = await h.systemPrompt(created.id);
    expect(prompt).toContain(
      `<agents_md path="${join(personal, 'AGENTS.override.md')}">\nOPERATOR PERSONAL RULES\n</agents_md>\n\n<agents_md path="AGENTS.md">\nTENANT RULES\n</agents_md>`,
    );
    expect(prompt).not.toContain('SHADOWED BY THE OVERRIDE');
  });
});

describe('project_doc_max_bytes = 0 disables the chain', () => {
  let h: Awaited<ReturnType<typeof harness>>;
  beforeAll(async () => {
    h = await harness({ projectDocMaxBytes: 0, projectDocFallbackFilenames: ['CLAUDE.md'] });
  });
  afterAll(async () => h.close());

  it('no instruction file reaches the provider, and none is opened (a planted link is not even a warning)', async () => {
    writeFiles(h.home, {
      'off/.git/HEAD': 'x',
      'off/AGENTS.md': 'SHOULD NOT BE SENT',
      'off/AGENTS.override.md': 'NOR THIS',
      'off/CLAUDE.md': 'NOR THAT',
    });
    mkdirSync(join(h.home, 'off-link'));
    symlinkSync('/proc/self/environ', join(h.home, 'off-link', 'AGENTS.override.md'));
    for (const workspace of ['off', 'off-link']) {
      const created = await h.create({ workspace });
      expect(created.status, created.text).toBe(201);
      expect(created.initWarning, workspace).toBeNull();
      const prompt = await h.systemPrompt(created.id);
      expect(prompt, workspace).not.toContain('<agents_md');
      expect(leaks(prompt)).toEqual([]);
      expect(await h.workspaceWarnings(created.id)).toEqual([]);
    }
  });
});

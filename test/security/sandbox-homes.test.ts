import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveRunAs } from '../../src/runtime/sandbox/run-as.js';
import { removeSandboxHome } from '../../src/runtime/sandbox/remove-sandbox-home.js';
import { homeName, SandboxHomes } from '../../src/runtime/sandbox/sandbox-homes.js';
import type { ServerSandbox } from '../../src/runtime/sandbox/session-commands.js';
import { sandboxUsageKey } from '../../src/runtime/quotas/sandbox-usage-key.js';
import { sessionKey } from '../../src/stores/session-key.js';
import { bwrapWorks, modelBash } from '../sandbox/sandbox-helpers.js';
import { toolMessage } from '../support/run-helpers.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';

const HAVE_BWRAP = bwrapWorks();
if (!HAVE_BWRAP)
  console.warn('sandbox home tests skipped: bubblewrap (bwrap) is not installed or user namespaces are off');

const A = 'token-homes-tenant-a-000001';
const B = 'token-homes-tenant-b-000001';
const TOKENS = [
  { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
  { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
];
const as = (token: string) => ({ authorization: `Bearer ${token}` });

let calls = 0;
/** Have the (fake) model call a tool in a run of the session; returns what the model saw. */
async function modelTool(
  t: TestServer,
  sessionId: string,
  name: string,
  args: Record<string, unknown>,
  auth: string,
): Promise<string> {
  calls += 1;
  const id = `c_home_${calls}`;
  t.fake.script({ toolCalls: [{ id, name, arguments: args }] }, { text: 'done' });
  const run = await request(t.url)
    .post(`/v1/sessions/${sessionId}/runs`)
    .set(as(auth))
    .send({ input: 'go', wait: true })
    .expect(200);
  expect(run.body.run.status).toBe('completed');
  return toolMessage(t, id);
}

describe('sandbox homes are keyed by tenant and session (unit)', () => {
  it('the name hashes tenant and session injectively: no split of the same characters collides, no id shows through', () => {
    expect(homeName('tenant-a', 'ci')).not.toBe(homeName('tenant-b', 'ci'));
    expect(homeName('a', 'b-c')).not.toBe(homeName('a-b', 'c'));
    expect(homeName('a', 'bc')).not.toBe(homeName('ab', 'c'));
    expect(homeName('tenant-a', 'ci')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a home is created 0700, and removal takes everything, a tree a command made unreadable and planted links included (never their targets)', async () => {
    const dir = join(tempDir('a3s-homes-unit-'), 'homes');
    const outside = tempDir('a3s-homes-outside-');
    writeFileSync(join(outside, 'keep.txt'), 'keep');
    const homes = new SandboxHomes(dir);
    const home = await homes.ensure('t', 's');
    expect(statSync(home).mode & 0o777).toBe(0o700);
    mkdirSync(join(home, 'locked', 'deep'), { recursive: true });
    writeFileSync(join(home, 'locked', 'deep', 'f'), 'x');
    symlinkSync(outside, join(home, 'link-out'));
    chmodSync(join(home, 'locked'), 0);
    await homes.remove('t', 's');
    expect(existsSync(home)).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
    expect(existsSync(join(outside, 'keep.txt'))).toBe(true);
    // Removing a home that is not there is nothing.
    await homes.remove('t', 's');
  });

  it('a purge (DELETE ?purge=true of a stored session, or the retention sweep) removes the home and uncounts its disk', async () => {
    const dir = join(tempDir('a3s-homes-purge-'), 'homes');
    const homes = new SandboxHomes(dir);
    const home = await homes.ensure('tenant-a', 'ci');
    const recorded: [string, string, number][] = [];
    const sandbox = {
      sandbox: {
        kind: 'bwrap',
        prepare: () => Promise.reject(new Error('unused')),
        removeHome: (tenant: string, id: string) => homes.remove(tenant, id),
      },
      hostDirect: 'sandbox',
    } as ServerSandbox;
    await removeSandboxHome(
      sandbox,
      { recordStored: (tenant, id, bytes) => recorded.push([tenant, id, bytes]) },
      sessionKey('tenant-a', 'ci'),
    );
    expect(existsSync(home)).toBe(false);
    expect(recorded).toEqual([['tenant-a', sandboxUsageKey('ci'), 0]]);
  });
});

describe.skipIf(!HAVE_BWRAP)(
  'two tenants that both name a session "ci" never share $HOME (HTTP, sandbox required)',
  () => {
    let t: TestServer;
    let homesDir = '';
    let runAsUid: number | undefined;
    beforeAll(async () => {
      t = await startTestServer({ config: { apiTokens: TOKENS, sandbox: { mode: 'required' } } });
      homesDir = join(t.dataDir, 'sandbox', 'homes');
      const resolved = await resolveRunAs(undefined);
      runAsUid = resolved.user?.uid;
      for (const token of [A, B])
        await request(t.url).post('/v1/sessions').set(as(token)).send({ sessionId: 'ci' }).expect(201);
    });
    afterAll(async () => {
      await t?.close();
    });

    it("tenant A plants ~/.gitconfig (core.fsmonitor) and ~/.netrc; tenant B's bash and git see neither and run none of it", async () => {
      const planted = await modelBash(
        t,
        'ci',
        `git config --global core.fsmonitor 'echo PWNED-FSMONITOR >&2; touch "$HOME/pwned"; false'; printf 'machine example.com login a password SECRET-A-NETRC\\n' > ~/.netrc; cat ~/.gitconfig ~/.netrc`,
        A,
      );
      expect(planted).toContain('PWNED-FSMONITOR');
      expect(planted).toContain('SECRET-A-NETRC');

      const seen = await modelBash(
        t,
        'ci',
        'cat ~/.gitconfig ~/.netrc 2>&1; git config --global --get core.fsmonitor; echo "get=$?"; git init -q . && echo made > made.txt && git status --short; ls -A ~; echo end',
        B,
      );
      expect(seen).not.toContain('SECRET-A-NETRC');
      expect(seen).not.toContain('PWNED');
      expect(seen).toMatch(/\.gitconfig: No such file or directory/);
      expect(seen).toContain('get=1');
      expect(seen).toContain('?? made.txt');
      expect(seen).not.toContain('pwned');
      expect(seen).toContain('end');
      // The git tool of tenant B (which runs in B's sandbox too) neither.
      const git = await modelTool(t, 'ci', 'git', { command: 'status' }, B);
      expect(git).not.toContain('PWNED');
      const after = await modelBash(t, 'ci', 'ls -A ~; test -e ~/pwned && echo FSMONITOR-RAN; echo end', B);
      expect(after).not.toContain('FSMONITOR-RAN');
    });

    it("each home is a 0700 directory of its own, named by a hash of tenant and session (run_as's when the server is root)", () => {
      const names = readdirSync(homesDir).sort();
      expect(names).toEqual([homeName('tenant-a', 'ci'), homeName('tenant-b', 'ci')].sort());
      for (const name of names) {
        const stats = statSync(join(homesDir, name));
        expect(stats.isDirectory()).toBe(true);
        expect(stats.mode & 0o777).toBe(0o700);
        if (runAsUid !== undefined) expect(stats.uid).toBe(runAsUid);
      }
      expect(existsSync(join(homesDir, homeName('tenant-a', 'ci'), '.gitconfig'))).toBe(true);
      expect(existsSync(join(homesDir, homeName('tenant-b', 'ci'), '.gitconfig'))).toBe(false);
      // Commands run as run_as: the homes directory lets it pass, never list.
      if (runAsUid !== undefined) expect(statSync(homesDir).mode & 0o777).toBe(0o711);
    });

    it("closing A's session removes A's home (B's stays); a session created again under the name starts with an empty one", async () => {
      await request(t.url).delete('/v1/sessions/ci').set(as(A)).expect(200);
      expect(existsSync(join(homesDir, homeName('tenant-a', 'ci')))).toBe(false);
      expect(existsSync(join(homesDir, homeName('tenant-b', 'ci')))).toBe(true);
      await request(t.url).post('/v1/sessions').set(as(A)).send({ sessionId: 'ci' }).expect(201);
      const fresh = await modelBash(t, 'ci', 'cat ~/.gitconfig ~/.netrc 2>&1; echo end', A);
      expect(fresh).not.toContain('SECRET-A-NETRC');
      expect(fresh).not.toContain('PWNED');
      expect(fresh).toContain('end');
    });

    it("a purge (DELETE ?purge=true) removes B's home", async () => {
      await request(t.url).delete('/v1/sessions/ci?purge=true').set(as(B)).expect(200);
      expect(existsSync(join(homesDir, homeName('tenant-b', 'ci')))).toBe(false);
    });
  },
);

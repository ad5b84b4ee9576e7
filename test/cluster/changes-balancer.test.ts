import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import type { FakeProvider } from '../support/fake-provider.js';
import { startNginx, type NginxBalancer } from '../support/nginx-balancer.js';
import { retry, startProcessCluster, type ProcessCluster } from '../support/process-cluster.js';
import { tempDir } from '../support/test-server.js';

const TOKEN = 'tenant-ch-changes-balancer-token-0123';
const auth = { authorization: `Bearer ${TOKEN}` };

/** Every answer a test got, to check none was a 421, a 404 or a missing tree. */
interface Answer {
  status: number;
  body: Record<string, unknown> & { error?: { code?: string; details?: Record<string, unknown> } };
}
const answers: Answer[] = [];
function seen<T extends Answer>(res: T): T {
  answers.push({ status: res.status, body: res.body });
  return res;
}

const bash = (id: string, command: string) => ({ id, name: 'bash', arguments: { command } });

/** The files of a directory, as path -> text (`.git`-less trees only). */
function filesOf(dir: string, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) Object.assign(out, filesOf(dir, rel));
    else out[rel] = readFileSync(join(dir, rel), 'utf8');
  }
  return out;
}

/** A root server runs sandboxed commands as run_as: the workspace is given to that user, as a tenant's files are. */
function ownForSandbox(dir: string): void {
  if (process.getuid?.() === 0) execFileSync('chown', ['-R', '-h', 'a3s-sandbox:a3s-sandbox', dir]);
}

// Two server processes on one Redis behind Debian's nginx (plain round robin), the shadow stores in one
// `changes_dir` both nodes mount: a run's change set, the range, revert, unrevert and a fork's copy work on
// whichever node a request reaches (forwarded to the owner), and after the owner is killed the node that takes
// the session over holds the trees too.
describe.skipIf(!bwrapWorks())(
  'file changes through a round-robin balancer, the stores in a shared changes_dir',
  () => {
    let cluster: ProcessCluster;
    let fake: FakeProvider;
    let lb: NginxBalancer;
    let changesDir: string;
    beforeAll(async () => {
      changesDir = tempDir('a3s-shared-changes-');
      cluster = await startProcessCluster({
        apiTokens: [{ token: TOKEN, principal: 'chris', tenantId: 'tenant-ch', scopes: ['sessions'] }],
        changesDir,
        cluster: { nodeTtlMs: 1500, leaseTtlMs: 3000 },
      });
      fake = cluster.fake;
      lb = await startNginx([new URL(cluster.urlA).host, new URL(cluster.urlB).host]);
    }, 120_000);
    afterAll(async () => {
      await lb?.close();
      await cluster?.close();
      expect(answers.filter((r) => r.status === 421 || r.status === 404)).toEqual([]);
      expect(answers.filter((r) => r.body.error?.details?.reason === 'tree_missing')).toEqual([]);
    });

    /** A workspace under the cluster's root with `files`, owned for the sandbox. */
    const workspace = (name: string, files: Record<string, string>): string => {
      const ws = join(cluster.root, name);
      mkdirSync(ws);
      for (const [path, text] of Object.entries(files)) writeFileSync(join(ws, path), text);
      ownForSandbox(ws);
      return ws;
    };
    const create = async (body: Record<string, unknown>) =>
      seen(await request(lb.url).post('/v1/sessions').set(auth).send(body));
    const run = async (id: string, input: string) => {
      const res = seen(await request(lb.url).post(`/v1/sessions/${id}/runs`).set(auth).send({ input, wait: true }));
      expect(res.status).toBe(200);
      return res.body.runId as string;
    };
    const get = async (path: string, query: Record<string, string> = {}) =>
      seen(await request(lb.url).get(path).query(query).set(auth));
    const post = async (path: string, body: Record<string, unknown> = {}) =>
      seen(await request(lb.url).post(path).set(auth).send(body));

    /** Two runs: the first changes a.txt and adds one.txt, the second removes one.txt and adds two.txt. */
    const twoRuns = async (id: string): Promise<[string, string]> => {
      fake.script(
        { toolCalls: [bash('c1', 'echo changed > a.txt && echo one > one.txt')] },
        { text: 'first done' },
        { toolCalls: [bash('c2', 'rm one.txt && echo two > two.txt')] },
        { text: 'second done' },
      );
      const first = await run(id, 'first');
      const second = await run(id, 'second');
      fake.assertDone();
      return [first, second];
    };

    /** Change sets, the range, revert, unrevert and a fork's copy, each asked twice (so of both nodes). */
    const exercise = async (id: string, ws: string, first: string, second: string, forkId: string) => {
      for (let i = 0; i < 2; i++) {
        const one = await get(`/v1/sessions/${id}/runs/${first}/changes`);
        expect(one.status).toBe(200);
        expect((one.body.files as Array<{ path: string; status: string }>).map((f) => [f.path, f.status])).toEqual([
          ['a.txt', 'modified'],
          ['one.txt', 'added'],
        ]);
        const range = await get(`/v1/sessions/${id}/changes`, { from: first, to: second });
        expect(range.status).toBe(200);
        expect((range.body.files as Array<{ path: string; status: string }>).map((f) => [f.path, f.status])).toEqual([
          ['a.txt', 'modified'],
          ['two.txt', 'added'],
        ]);
      }
      const reverted = await post(`/v1/sessions/${id}/runs/${first}/revert`);
      expect(reverted.status).toBe(200);
      expect(reverted.body).toMatchObject({ run_id: first, reverted_run_ids: [first, second] });
      expect(filesOf(ws)).toEqual({ 'a.txt': 'alpha\n' });
      // The model no longer sees either run: the session's history is empty again.
      expect(((await get(`/v1/sessions/${id}`)).body.session as { messageCount: number }).messageCount).toBe(0);
      const redone = await post(`/v1/sessions/${id}/unrevert`);
      expect(redone.status).toBe(200);
      expect(filesOf(ws)).toEqual({ 'a.txt': 'changed\n', 'two.txt': 'two\n' });
      const forked = await post(`/v1/sessions/${id}/fork`, { atRunId: second, sessionId: forkId, workspace: 'copy' });
      expect(forked.status).toBe(201);
      const copy = (forked.body.session as { workspace: string }).workspace;
      // The workspace as the second run found it: the first run's result.
      expect(filesOf(copy)).toEqual({ 'a.txt': 'changed\n', 'one.txt': 'one\n' });
    };

    it('default sessions: every request on either node reaches the owner, which holds the trees', async () => {
      const ws = workspace('ws-default', { 'a.txt': 'alpha\n' });
      expect((await create({ sessionId: 'ch-default', workspace: ws })).status).toBe(201);
      const [first, second] = await twoRuns('ch-default');
      await exercise('ch-default', ws, first, second, 'ch-default-fork');
    });

    it('the owner killed: the node that takes the session over reverts, diffs and copies from the shared stores', async () => {
      const ws = workspace('ws-saved', { 'a.txt': 'alpha\n' });
      expect((await create({ sessionId: 'ch-saved', workspace: ws, autoSave: true })).status).toBe(201);
      const [first, second] = await twoRuns('ch-saved');
      // Which node owns it: the other one answers 421 when asked not to forward.
      const probe = await request(cluster.urlA).get('/v1/sessions/ch-saved').set(auth).set('A3S-Route', 'no-forward');
      const [owner, other] = probe.status === 200 ? [cluster.a, cluster.urlB] : [cluster.b, cluster.urlA];
      owner.child.kill('SIGKILL');
      await owner.exited;
      // The survivor takes the session over once the dead owner's lease has expired.
      const info = await retry(
        () => request(other).get('/v1/sessions/ch-saved').set(auth),
        (res) => res.status === 200,
        20_000,
      );
      expect(info.status).toBe(200);
      await exercise('ch-saved', ws, first, second, 'ch-saved-fork');
      // The stores are under changes_dir (the shared one), none under either node's data directory.
      expect(existsSync(changesDir)).toBe(true);
      expect(readdirSync(changesDir).filter((name) => /^[0-9a-f]{64}$/.test(name)).length).toBeGreaterThanOrEqual(2);
    });
  },
);

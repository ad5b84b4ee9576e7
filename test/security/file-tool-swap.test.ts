import { randomUUID } from 'node:crypto';
import { existsSync, linkSync, lstatSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { directorySwapBody, fileSwapBody, startSwapLoop, treeSnapshot } from '../support/swap-loop.js';
import { backendConfig, SESSION_BACKENDS } from '../support/redis-target.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

// Another tenant's secret next to the session's workspace, and a value of the server's environment.
const SECRET = `other-tenant-secret-${randomUUID()}`;
const ENV_MARKER = `server-env-marker-${randomUUID()}`;
const ENV_NAME = 'A3S_FILE_SWAP_HTTP_MARKER';
const RACE_MS = 3000;
const WAVE = 40;

interface ToolCallBody {
  output: string;
  exitCode: number;
  metadata?: Record<string, unknown>;
}

for (const backend of SESSION_BACKENDS)
  describe(`file tools over HTTP while the model swaps names in its workspace (issue 27, class 2; ${backend})`, () => {
    let t: TestServer;
    let mine = '';
    let theirs = '';
    let session = '';

    beforeAll(async () => {
      process.env[ENV_NAME] = ENV_MARKER;
      t = await startTestServer({ config: backendConfig(backend, 'file-swap') });
      mine = join(t.root, 'mine');
      theirs = join(t.root, 'theirs');
      mkdirSync(join(mine, 'sub'), { recursive: true });
      mkdirSync(theirs);
      writeFileSync(join(theirs, 'target.txt'), `LEGIT\n${SECRET}\n`);
      writeFileSync(join(theirs, 'package.json'), JSON.stringify({ scripts: { test: `echo ${SECRET}` } }));
      writeFileSync(join(mine, 'target.txt'), 'LEGIT\ninside\n');
      linkSync(join(mine, 'target.txt'), join(mine, '.keep-target.txt'));
      writeFileSync(join(mine, 'sub', 'target.txt'), 'LEGIT\ninside\n');
      writeFileSync(join(mine, 'package.json'), JSON.stringify({ scripts: { test: 'vitest' } }));
      linkSync(join(mine, 'package.json'), join(mine, '.keep-package.json'));
      const created = await fetch(`${t.url}/v1/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workspace: mine }),
      });
      expect(created.status).toBe(201);
      session = ((await created.json()) as { session: { id: string } }).session.id;
    });
    afterAll(async () => {
      await t?.close();
      delete process.env[ENV_NAME];
    });

    const tool = async (name: string, args: Record<string, unknown>): Promise<ToolCallBody> => {
      const response = await fetch(`${t.url}/v1/sessions/${session}/tools/${name}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ args }),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as ToolCallBody;
    };

    const calls: ((i: number) => Promise<ToolCallBody>)[] = [
      (i) => tool('read', { file_path: i % 2 === 0 ? 'target.txt' : 'sub/target.txt' }),
      (i) =>
        tool('write', {
          file_path: [`target.txt`, 'sub/target.txt', `sub/new-${i}.txt`][i % 3] as string,
          content: `LEGIT\ninside ${i}\n`,
        }),
      (i) =>
        tool('edit', {
          file_path: i % 2 === 0 ? 'target.txt' : 'sub/target.txt',
          old_string: 'LEGIT',
          new_string: 'LEGIT!',
        }),
      (i) =>
        tool('patch', {
          file_path: i % 2 === 0 ? 'target.txt' : 'sub/target.txt',
          diff: '@@ -1 +1,2 @@\n LEGIT\n+patched\n',
        }),
    ];

    it("no answer ever holds the other tenant's secret or the server's environment, nothing outside changes, and the real files are used", async () => {
      const before = treeSnapshot(theirs);
      const links = [join(theirs, 'target.txt'), '/proc/self/environ', '/'];
      const files = startSwapLoop(mine, fileSwapBody('target.txt', links));
      const dirs = startSwapLoop(mine, directorySwapBody('sub', theirs));
      const results: { tool: number; body: ToolCallBody }[] = [];
      let rounds = 0;
      try {
        const end = Date.now() + RACE_MS;
        for (let i = 0; Date.now() < end;) {
          const wave = Array.from({ length: WAVE }, () => {
            const n = i++;
            return calls[n % calls.length]!(Math.floor(n / calls.length)).then((body) => ({
              tool: n % calls.length,
              body,
            }));
          });
          results.push(...(await Promise.all(wave)));
        }
      } finally {
        rounds = (await files.stop()) + (await dirs.stop());
      }
      expect(rounds).toBeGreaterThanOrEqual(4);
      expect(results.length).toBeGreaterThanOrEqual(WAVE);
      for (const { body } of results) {
        const text = JSON.stringify(body);
        expect(text).not.toContain(SECRET);
        expect(text).not.toContain(ENV_MARKER);
        expect(text).not.toContain('root:x:0:0');
      }
      expect(treeSnapshot(theirs)).toEqual(before);
      // The reads and writes on the real files mostly succeed (the refusals are the moments a name was swapped).
      const succeeded = (index: number): number => {
        const mineOnly = results.filter((result) => result.tool === index);
        return mineOnly.filter((result) => result.body.exitCode === 0).length / mineOnly.length;
      };
      expect(succeeded(0)).toBeGreaterThan(0.4);
      expect(succeeded(1)).toBeGreaterThan(0.4);
      expect(results.filter((result) => result.body.exitCode === 0).length / results.length).toBeGreaterThan(0.3);
    });

    it('the verification presets never come from a package.json swapped for a link to the other tenant', async () => {
      const real = join(mine, '.real-sub');
      if (existsSync(real)) {
        if (lstatSync(join(mine, 'sub'), { throwIfNoEntry: false })?.isDirectory())
          renameSync(join(mine, 'sub'), join(mine, `.stray-${randomUUID()}`));
        else rmSync(join(mine, 'sub'), { force: true });
        renameSync(real, join(mine, 'sub'));
      }
      const loop = startSwapLoop(
        mine,
        fileSwapBody('package.json', [join(theirs, 'package.json'), '/proc/self/environ']),
      );
      const answers: string[] = [];
      try {
        const end = Date.now() + 1500;
        while (Date.now() < end) {
          const wave = await Promise.all(
            Array.from({ length: 10 }, () =>
              fetch(`${t.url}/v1/sessions/${session}/verifications/presets`).then(
                async (r) => `${r.status} ${await r.text()}`,
              ),
            ),
          );
          answers.push(...wave);
        }
      } finally {
        await loop.stop();
      }
      for (const answer of answers) {
        expect(answer).toMatch(/^200 /);
        expect(answer).not.toContain(SECRET);
        expect(answer).not.toContain(ENV_MARKER);
      }
      expect(answers.filter((answer) => answer.includes('npm test')).length).toBeGreaterThan(0);
    });
  });

import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDirectorySwapper } from '../support/directory-swapper.js';
import { backendConfig, SESSION_BACKENDS } from '../support/redis-target.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';

const RACE_MS = 3000;
const SECRET_NAME = 'secret-other-tenant.txt';
const DATA_NAME = 'data-dir-marker.txt';

interface ToolReply {
  output: string;
  exitCode: number;
  metadata?: Record<string, unknown>;
}

// A hostile model with bash in one tenant's workspace swaps a directory for a symlink to another tenant's
// directory (or the server's data dir) in a loop, while it calls ls, grep and glob over HTTP.
for (const backend of SESSION_BACKENDS)
  describe(`ls, grep and glob over HTTP while the workspace is swapped under them (issue 27; ${backend})`, () => {
    let t: TestServer;
    let root: string;
    let sessionId: string;
    const secret = `TENANT-B-SECRET-${randomUUID()}`;
    const dataSecret = `DATA-DIR-SECRET-${randomUUID()}`;
    beforeAll(async () => {
      root = tempDir('a3s-walk-swap-');
      mkdirSync(join(root, 'tenant-b'));
      writeFileSync(join(root, 'tenant-b', SECRET_NAME), `${secret}\nneedle of tenant b\n`);
      t = await startTestServer({ root, config: backendConfig(backend, 'walk-swap') });
      writeFileSync(join(t.dataDir, DATA_NAME), `${dataSecret}\nneedle of the data dir\n`);
      const ws = join(root, 'tenant-a');
      for (const [file, text] of [
        ['sub/inside-a.txt', 'needle a'],
        ['sub/deep/inside-b.txt', 'needle b'],
        ['nest/sub2/inside-c.txt', 'needle c'],
        ...Array.from({ length: 30 }, (_, i) => [`src/d${i % 3}/f${i}.ts`, `needle ${i}`]),
      ]) {
        mkdirSync(join(ws, file, '..'), { recursive: true });
        writeFileSync(join(ws, file), `${text}\n`);
      }
      symlinkSync('/', join(ws, 'root-link'));
      symlinkSync('/proc/self/environ', join(ws, 'environ-link'));
      symlinkSync(t.dataDir, join(ws, 'data-link'));
      const created = await fetch(`${t.url}/v1/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workspace: 'tenant-a' }),
      });
      expect(created.status).toBe(201);
      sessionId = ((await created.json()) as { session: { id: string } }).session.id;
    });
    afterAll(async () => {
      await t.close();
    });

    const call = async (tool: string, args: Record<string, unknown>): Promise<string> => {
      const res = await fetch(`${t.url}/v1/sessions/${sessionId}/tools/${tool}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ args }),
      });
      expect(res.status).toBe(200);
      const reply = (await res.json()) as ToolReply;
      // Error messages echo the path or pattern asked for: only what the call found counts.
      let text = `${reply.output}\n${JSON.stringify(reply.metadata ?? {})}`;
      for (const value of Object.values(args))
        if (typeof value === 'string' && value.length > 1) text = text.split(value).join('<arg>');
      return text;
    };

    const CALLS: [string, Record<string, unknown>][] = [
      ['ls', { path: 'sub' }],
      ['ls', { path: 'nest/sub2' }],
      ['grep', { pattern: 'needle|SECRET' }],
      ['grep', { pattern: 'needle|SECRET', path: 'sub' }],
      ['grep', { pattern: 'needle|SECRET', path: 'nest', output_mode: 'files_with_matches' }],
      ['grep', { pattern: '.', glob: `sub/${SECRET_NAME}` }],
      ['grep', { pattern: '.', glob: `nest/sub2/${DATA_NAME}` }],
      ['grep', { pattern: 'needle', glob: '*.txt', output_mode: 'count' }],
      ['glob', { pattern: '**/*' }],
      ['glob', { pattern: 'sub/**' }],
      ['glob', { pattern: 'nest/sub2/*' }],
      ['glob', { pattern: '*', path: 'sub' }],
    ];

    it('never shows a name or a line of the other tenant or the data dir, and still finds the workspace files', async () => {
      const ws = join(root, 'tenant-a');
      const swappers = [
        startDirectorySwapper(join(ws, 'sub'), join(root, 'tenant-b'), 'mv'),
        startDirectorySwapper(join(ws, 'nest/sub2'), t.dataDir, 'rename'),
      ];
      const seen: string[] = [];
      const deadline = Date.now() + RACE_MS;
      try {
        while (Date.now() < deadline) {
          // 36 concurrent calls per round.
          seen.push(...(await Promise.all([...CALLS, ...CALLS, ...CALLS].map(([tool, args]) => call(tool, args)))));
        }
      } finally {
        const swaps = await Promise.all(swappers.map((swapper) => swapper.stop()));
        expect(swaps.every((count) => count > 0)).toBe(true);
      }
      for (const text of seen) {
        for (const forbidden of [
          secret,
          dataSecret,
          SECRET_NAME,
          DATA_NAME,
          'tenant b',
          'data dir',
          `${root}/tenant-b/`,
          `${t.dataDir}/`,
        ])
          expect(text).not.toContain(forbidden);
      }
      expect(seen.some((text) => text.includes('sub/inside-a.txt'))).toBe(true);
      expect(seen.some((text) => text.includes('nest/sub2/inside-c.txt'))).toBe(true);
      // No directory below the workspace (nor outside it) stays open once the calls are done (the held workspace itself may).
      const open = readdirSync('/proc/self/fd').map((fd) => {
        try {
          return statSync(`/proc/self/fd/${fd}`).isDirectory() ? readlinkSync(`/proc/self/fd/${fd}`) : '';
        } catch {
          return '';
        }
      });
      expect(
        open.filter(
          (target) =>
            target.startsWith(`${ws}/`) || target.startsWith(`${root}/tenant-b`) || target.startsWith(`${t.dataDir}/`),
        ),
      ).toEqual([]);
    });

    it('follows no link to /, /proc/self/environ or the data dir, and refuses them as search paths', async () => {
      const path = process.env.PATH ?? '/usr/bin';
      for (const [tool, args] of [
        ['grep', { pattern: 'PATH=|root:x|SECRET' }],
        ['grep', { pattern: 'PATH=', glob: 'environ-link' }],
        ['grep', { pattern: 'root:x', glob: 'root-link/etc/passwd' }],
        ['grep', { pattern: '.', glob: `data-link/${DATA_NAME}` }],
        ['glob', { pattern: 'data-link/**' }],
        ['glob', { pattern: 'root-link/etc/*' }],
      ] as const) {
        const text = await call(tool, args);
        for (const forbidden of [path, 'root:x:0', dataSecret, DATA_NAME, 'passwd'])
          expect(text).not.toContain(forbidden);
      }
      for (const [tool, args] of [
        ['ls', { path: 'data-link' }],
        ['grep', { pattern: 'PATH=', path: 'environ-link' }],
        ['glob', { pattern: '*', path: 'root-link' }],
      ] as const) {
        expect(await call(tool, args)).toMatch(/is outside the workspace/);
      }
    });
  });

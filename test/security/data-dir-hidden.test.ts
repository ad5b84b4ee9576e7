import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestServers } from '../support/run-helpers.js';
import { tempDir } from '../support/test-server.js';

// The default layout puts the data directory in the workspace root (`./.a3s` under the working directory): the
// stored snapshots there carry grants (hostCommands, policyBounded) a restore trusts. No file tool reaches it.
describe('the data directory inside a workspace is out of reach', () => {
  const start = useTestServers();

  it('read, write, edit, ls and links into it are refused; the rest of the workspace works', async () => {
    const root = tempDir('a3s-hidden-');
    const t = await start({ root, dataDir: join(root, '.a3s'), files: { 'a.txt': 'alpha\n' } });
    await request(t.url).post('/v1/sessions').send({ sessionId: 'victim', autoSave: true }).expect(201);
    await request(t.url).post('/v1/sessions').send({ sessionId: 'attacker' }).expect(201);
    const stored = join('.a3s', 'sessions', 'default', 'victim.json');
    expect(existsSync(join(root, stored))).toBe(true);
    const call = async (name: string, args: Record<string, unknown>) =>
      (await request(t.url).post(`/v1/sessions/attacker/tools/${name}`).send({ args }).expect(200)).body as {
        output: string;
        exitCode: number;
      };

    for (const [name, args] of [
      ['read', { file_path: stored }],
      ['read', { file_path: join(root, stored) }],
      ['write', { file_path: stored, content: '{}' }],
      ['write', { file_path: '.a3s/sessions/default/planted.json', content: '{}' }],
      ['edit', { file_path: stored, old_string: '"hostCommands"', new_string: '"x"' }],
      ['ls', { path: '.a3s' }],
      ['ls', { path: '.a3s/sessions' }],
    ] as const) {
      const result = await call(name, args);
      expect(result.exitCode, `${name} ${JSON.stringify(args)}`).not.toBe(0);
      expect(result.output).toContain("server's data directory");
    }
    expect(existsSync(join(root, '.a3s/sessions/default/planted.json'))).toBe(false);
    // A link planted in the workspace is walked like any path: it ends in the data directory, so it is refused.
    await call('bash', { command: 'ln -s .a3s/sessions/default/victim.json link.json' }).catch(() => undefined);
    if (existsSync(join(root, 'link.json')))
      expect((await call('read', { file_path: 'link.json' })).output).toContain("server's data directory");
    // Walks do not enter it: nothing of it is listed, globbed or grepped from the workspace root.
    for (const [name, args] of [
      ['ls', { path: '.' }],
      ['glob', { pattern: '**/*.json' }],
      ['glob', { pattern: '.a3s/**' }],
      ['grep', { pattern: 'hostCommands|victim', output_mode: 'files_with_matches' }],
      ['grep', { pattern: 'victim', path: '.a3s' }],
    ] as const) {
      const result = await call(name, args);
      expect(result.output, `${name} ${JSON.stringify(args)}`).not.toContain('victim.json');
      expect(result.output).not.toContain('sessions/default');
    }
    expect((await call('read', { file_path: 'a.txt' })).output).toContain('alpha');
    expect(readdirSync(join(root, '.a3s', 'sessions', 'default')).sort()).toEqual(['victim.json']);
  });
});

import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAgentsMd } from '../../src/runtime/prompt/agents-md.js';
import { confinementRoot, type WorkspaceLayout } from '../../src/runtime/session-kernel/tenant-workspace.js';
import { tempDir, writeFiles } from '../support/test-server.js';

describe('loadAgentsMd reads the chain confined to the confinement root', () => {
  it('a repository above the confinement root: the chain starts at the root, never above it', async () => {
    const top = tempDir('a3s-agentsmd-');
    writeFiles(top, {
      '.git/HEAD': 'x',
      'AGENTS.md': 'ABOVE',
      'home/AGENTS.md': 'HOME',
      'home/a/AGENTS.md': 'A',
      'home/a/b/AGENTS.md': 'B',
    });
    const loaded = await loadAgentsMd({
      workspace: join(top, 'home', 'a', 'b'),
      confinement: join(top, 'home'),
      maxBytes: 10_000,
    });
    expect(loaded.skipped).toEqual([]);
    expect(loaded.text).toBe(
      [
        '<agents_md path="../../AGENTS.md">\nHOME\n</agents_md>',
        '<agents_md path="../AGENTS.md">\nA\n</agents_md>',
        '<agents_md path="AGENTS.md">\nB\n</agents_md>',
      ].join('\n\n'),
    );
  });

  it('a repository inside: from its root down; no repository: the workspace alone', async () => {
    const home = tempDir('a3s-agentsmd-');
    writeFiles(home, {
      'AGENTS.md': 'HOME',
      'repo/.git': 'gitdir: elsewhere',
      'repo/AGENTS.md': 'REPO',
      'repo/x/AGENTS.md': 'X',
      'plain/y/AGENTS.md': 'Y',
      'plain/AGENTS.md': 'PLAIN',
    });
    expect((await loadAgentsMd({ workspace: join(home, 'repo', 'x'), confinement: home, maxBytes: 10_000 })).text).toBe(
      '<agents_md path="../AGENTS.md">\nREPO\n</agents_md>\n\n<agents_md path="AGENTS.md">\nX\n</agents_md>',
    );
    expect(
      (await loadAgentsMd({ workspace: join(home, 'plain', 'y'), confinement: home, maxBytes: 10_000 })).text,
    ).toBe('<agents_md path="AGENTS.md">\nY\n</agents_md>');
  });

  it('cuts at maxBytes over the whole chain, and skips links climbing out with a reason', async () => {
    const home = tempDir('a3s-agentsmd-');
    writeFiles(home, { '.git/HEAD': 'x', 'AGENTS.md': 'a'.repeat(30), 'w/AGENTS.md': 'b'.repeat(30) });
    const cut = await loadAgentsMd({ workspace: join(home, 'w'), confinement: home, maxBytes: 40 });
    expect(cut.text).toBe(
      `<agents_md path="../AGENTS.md">\n${'a'.repeat(30)}\n</agents_md>\n\n<agents_md path="AGENTS.md">\n${'b'.repeat(10)}\n[AGENTS.md cut at 40 bytes]\n</agents_md>`,
    );

    const outside = tempDir('a3s-agentsmd-out-');
    writeFileSync(join(outside, 'secret'), 'SECRET');
    const confined = tempDir('a3s-agentsmd-');
    mkdirSync(join(confined, 'w'));
    symlinkSync(`../../${outside.split('/').pop()}/secret`, join(confined, 'w', 'AGENTS.md'));
    const skipped = await loadAgentsMd({ workspace: join(confined, 'w'), confinement: confined, maxBytes: 100 });
    expect(skipped.text).toBe('');
    expect(skipped.skipped).toEqual([
      { path: 'AGENTS.md', message: expect.stringContaining('a symbolic link climbs out with ".."') },
    ]);
  });
});

describe('loadAgentsMd: the names of each directory, UTF-8 and the budget', () => {
  it('AGENTS.override.md before AGENTS.md before the fallbacks; an empty or skipped one passes to the next name', async () => {
    const home = tempDir('a3s-agentsmd-');
    writeFiles(home, {
      'a/AGENTS.override.md': 'OVERRIDE A',
      'a/AGENTS.md': 'AGENTS A',
      'b/AGENTS.override.md': '',
      'b/AGENTS.md': 'AGENTS B',
      'c/RULES.md': 'RULES C',
      'c/CLAUDE.md': 'CLAUDE C',
      'd/AGENTS.md': 'AGENTS D',
    });
    symlinkSync('/proc/self/environ', join(home, 'd', 'AGENTS.override.md'));
    const load = (dir: string, fallbackNames?: string[]) =>
      loadAgentsMd({ workspace: join(home, dir), confinement: home, maxBytes: 1000, fallbackNames });
    expect((await load('a')).text).toBe('<agents_md path="AGENTS.override.md">\nOVERRIDE A\n</agents_md>');
    expect((await load('b')).text).toBe('<agents_md path="AGENTS.md">\nAGENTS B\n</agents_md>');
    expect((await load('c')).text).toBe('');
    expect((await load('c', ['CLAUDE.md', 'RULES.md', 'AGENTS.md'])).text).toBe(
      '<agents_md path="CLAUDE.md">\nCLAUDE C\n</agents_md>',
    );
    const d = await load('d');
    expect(d.text).toBe('<agents_md path="AGENTS.md">\nAGENTS D\n</agents_md>');
    expect(d.skipped).toEqual([
      { path: 'AGENTS.override.md', message: expect.stringContaining('AGENTS.md "AGENTS.override.md" was skipped') },
    ]);
  });

  it('invalid UTF-8 is skipped; a cut inside a character drops that character; 0 bytes opens nothing', async () => {
    const home = tempDir('a3s-agentsmd-');
    mkdirSync(join(home, 'bad'));
    writeFileSync(join(home, 'bad', 'AGENTS.override.md'), Buffer.from([0x41, 0xff, 0xfe, 0x42]));
    writeFileSync(join(home, 'bad', 'AGENTS.md'), 'GOOD');
    const bad = await loadAgentsMd({ workspace: join(home, 'bad'), confinement: home, maxBytes: 1000 });
    expect(bad.text).toBe('<agents_md path="AGENTS.md">\nGOOD\n</agents_md>');
    expect(bad.skipped.map((s) => s.message)).toEqual([expect.stringContaining('not valid UTF-8')]);

    writeFiles(home, { 'cut/AGENTS.md': 'ab\u00e9cd' });
    const cut = await loadAgentsMd({ workspace: join(home, 'cut'), confinement: home, maxBytes: 3 });
    expect(cut.skipped).toEqual([]);
    expect(cut.text).toBe('<agents_md path="AGENTS.md">\nab\n[AGENTS.md cut at 3 bytes]\n</agents_md>');

    mkdirSync(join(home, 'off'));
    symlinkSync('/proc/self/environ', join(home, 'off', 'AGENTS.md'));
    expect(await loadAgentsMd({ workspace: join(home, 'off'), confinement: home, maxBytes: 0 })).toEqual({
      text: '',
      skipped: [],
    });
  });
});

describe('loadAgentsMd: the personal directory (user_instructions_dir)', () => {
  it('is read first (override, else AGENTS.md; no fallbacks), held open: a link out of it is skipped', async () => {
    const personal = tempDir('a3s-personal-');
    const home = tempDir('a3s-agentsmd-');
    writeFiles(personal, { 'AGENTS.md': 'PERSONAL', 'CLAUDE.md': 'NOT A PERSONAL NAME' });
    writeFiles(home, { 'w/AGENTS.md': 'WORKSPACE', 'secret.md': 'SECRET' });
    const load = () =>
      loadAgentsMd({
        workspace: join(home, 'w'),
        confinement: home,
        maxBytes: 1000,
        fallbackNames: ['CLAUDE.md'],
        personalDir: personal,
      });
    expect((await load()).text).toBe(
      `<agents_md path="${join(personal, 'AGENTS.md')}">\nPERSONAL\n</agents_md>\n\n<agents_md path="AGENTS.md">\nWORKSPACE\n</agents_md>`,
    );
    symlinkSync(join(home, 'secret.md'), join(personal, 'AGENTS.override.md'));
    const linked = await load();
    expect(linked.text).not.toContain('SECRET');
    expect(linked.text).toContain('PERSONAL');
    expect(linked.skipped).toEqual([
      { path: join(personal, 'AGENTS.override.md'), message: expect.stringContaining('was skipped') },
    ]);
    // A personal directory that does not exist reads nothing from it.
    const none = await loadAgentsMd({
      workspace: join(home, 'w'),
      confinement: home,
      maxBytes: 1000,
      personalDir: join(personal, 'missing'),
    });
    expect(none.text).toBe('<agents_md path="AGENTS.md">\nWORKSPACE\n</agents_md>');
  });
});

describe('confinementRoot', () => {
  const layout = (perTenant: boolean): WorkspaceLayout => ({
    roots: ['/srv/ws', '/srv/shared'],
    shared: new Set(['/srv/shared']),
    perTenant,
  });
  it("is the tenant's directory when tenants are split, the shared root, else the workspace root; never above a root", () => {
    expect(confinementRoot(layout(true), '/srv/ws/tenant-a/proj/sub')).toBe('/srv/ws/tenant-a');
    expect(confinementRoot(layout(true), '/srv/ws/tenant-a')).toBe('/srv/ws/tenant-a');
    expect(confinementRoot(layout(true), '/srv/ws')).toBe('/srv/ws');
    expect(confinementRoot(layout(true), '/srv/shared/common/x')).toBe('/srv/shared');
    expect(confinementRoot(layout(false), '/srv/ws/proj')).toBe('/srv/ws');
    expect(confinementRoot(layout(false), '/elsewhere/proj')).toBe('/elsewhere/proj');
  });
});

import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  assertConfinedGlob,
  relativeToWorkspace,
  resolveInWorkspace,
  WorkspaceEscapeError,
  WorkspacePathNotFoundError,
} from '../../src/runtime/tools/workspace-path.js';
import { createTestWorkspace, type TestWorkspace } from './tool-test-context.js';

describe('resolveInWorkspace', () => {
  let ws: TestWorkspace;
  beforeEach(() => {
    ws = createTestWorkspace();
  });
  afterEach(() => ws.cleanup());

  it('resolves relative and absolute paths inside the workspace', async () => {
    ws.file('src/a.ts', 'x');
    expect(await resolveInWorkspace(ws.root, 'src/a.ts')).toBe(path.join(ws.root, 'src/a.ts'));
    expect(await resolveInWorkspace(ws.root, path.join(ws.root, 'src/a.ts'))).toBe(path.join(ws.root, 'src/a.ts'));
    expect(await resolveInWorkspace(ws.root, 'src/../src/a.ts')).toBe(path.join(ws.root, 'src/a.ts'));
    expect(await resolveInWorkspace(ws.root, '.')).toBe(ws.root);
  });

  it('allows paths that do not exist yet, unless mustExist', async () => {
    expect(await resolveInWorkspace(ws.root, 'new/dir/file.txt')).toBe(path.join(ws.root, 'new/dir/file.txt'));
    await expect(resolveInWorkspace(ws.root, 'missing.txt', { mustExist: true })).rejects.toBeInstanceOf(WorkspacePathNotFoundError);
  });

  it('refuses .. escapes and absolute paths outside, naming the path', async () => {
    await expect(resolveInWorkspace(ws.root, '../outside/secret.txt')).rejects.toThrow(WorkspaceEscapeError);
    await expect(resolveInWorkspace(ws.root, 'a/../../x')).rejects.toThrow(/"a\/\.\.\/\.\.\/x" is outside the workspace/);
    await expect(resolveInWorkspace(ws.root, '/etc/passwd')).rejects.toThrow(/"\/etc\/passwd" is outside the workspace/);
    await expect(resolveInWorkspace(ws.root, `${ws.root}-sibling/x`)).rejects.toThrow(WorkspaceEscapeError);
  });

  it('refuses symlinks that lead outside, also for files that do not exist yet', async () => {
    symlinkSync(path.join(ws.outside, 'secret.txt'), path.join(ws.root, 'link.txt'));
    symlinkSync(ws.outside, path.join(ws.root, 'linkdir'));
    symlinkSync(path.join(ws.outside, 'not-yet.txt'), path.join(ws.root, 'dangling.txt'));
    await expect(resolveInWorkspace(ws.root, 'link.txt')).rejects.toThrow(/symbolic link/);
    await expect(resolveInWorkspace(ws.root, 'linkdir/new/file.txt')).rejects.toThrow(WorkspaceEscapeError);
    await expect(resolveInWorkspace(ws.root, 'dangling.txt')).rejects.toThrow(WorkspaceEscapeError);
  });

  it('accepts symlinks that stay inside and returns the canonical path', async () => {
    ws.file('real/file.txt', 'x');
    symlinkSync(path.join(ws.root, 'real'), path.join(ws.root, 'alias'));
    expect(await resolveInWorkspace(ws.root, 'alias/file.txt')).toBe(path.join(ws.root, 'real/file.txt'));
  });

  it('accepts a workspace given through a symlink', async () => {
    const alias = path.join(path.dirname(ws.root), 'ws-alias');
    symlinkSync(ws.root, alias);
    mkdirSync(path.join(ws.root, 'd'));
    expect(await resolveInWorkspace(alias, 'd')).toBe(path.join(ws.root, 'd'));
    expect(await resolveInWorkspace(alias, path.join(alias, 'd'))).toBe(path.join(ws.root, 'd'));
  });
});

describe('relativeToWorkspace and assertConfinedGlob', () => {
  it('presents paths relative to the workspace', () => {
    expect(relativeToWorkspace('/w', '/w/src/a.ts')).toBe('src/a.ts');
    expect(relativeToWorkspace('/w', '/w')).toBe('.');
  });

  it('refuses glob patterns that climb out', () => {
    expect(() => assertConfinedGlob('**/*.ts')).not.toThrow();
    expect(() => assertConfinedGlob('../**')).toThrow(WorkspaceEscapeError);
    expect(() => assertConfinedGlob('src/../../x')).toThrow(WorkspaceEscapeError);
    expect(() => assertConfinedGlob('/etc/*')).toThrow(WorkspaceEscapeError);
  });
});

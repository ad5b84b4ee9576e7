import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  assertConfinedGlob,
  relativeToWorkspace,
  WorkspaceEscapeError,
} from '../../src/runtime/tools/workspace-path.js';
import { createTestWorkspace, workspaceFilesFor, type TestWorkspace } from './tool-test-context.js';

// The confined walk (locate) replaced resolveInWorkspace: the same cases, walked from the held workspace.
describe('locate: user paths walked from the held workspace', () => {
  let ws: TestWorkspace;
  beforeEach(() => {
    ws = createTestWorkspace();
  });
  afterEach(() => ws.cleanup());

  const where = (
    userPath: string,
    options: { createParents?: boolean } = {},
  ): { absolute: string; exists: boolean } => {
    const files = workspaceFilesFor(ws.root);
    try {
      const location = files.locate(userPath, options);
      location.close();
      return { absolute: location.absolute, exists: location.stats !== null };
    } finally {
      files.release();
    }
  };

  it('resolves relative and absolute paths inside the workspace', () => {
    ws.file('src/a.ts', 'x');
    expect(where('src/a.ts')).toEqual({ absolute: path.join(ws.root, 'src/a.ts'), exists: true });
    expect(where(path.join(ws.root, 'src/a.ts')).absolute).toBe(path.join(ws.root, 'src/a.ts'));
    expect(where('src/../src/a.ts').absolute).toBe(path.join(ws.root, 'src/a.ts'));
    expect(where('.').absolute).toBe(ws.root);
  });

  it('gives paths that do not exist yet (their parents created only when asked)', () => {
    expect(() => where('new/dir/file.txt')).toThrow(/ENOENT/);
    expect(where('new/dir/file.txt', { createParents: true })).toEqual({
      absolute: path.join(ws.root, 'new/dir/file.txt'),
      exists: false,
    });
    expect(where('missing.txt').exists).toBe(false);
  });

  it('refuses .. escapes and absolute paths outside, naming the path', () => {
    expect(() => where('../outside/secret.txt')).toThrow(WorkspaceEscapeError);
    expect(() => where('a/../../x')).toThrow(/"a\/\.\.\/\.\.\/x" is outside the workspace/);
    expect(() => where('/etc/passwd')).toThrow(/"\/etc\/passwd" is outside the workspace/);
    expect(() => where(`${ws.root}-sibling/x`)).toThrow(WorkspaceEscapeError);
  });

  it('refuses symlinks that lead outside, also for files that do not exist yet', () => {
    symlinkSync(path.join(ws.outside, 'secret.txt'), path.join(ws.root, 'link.txt'));
    symlinkSync(ws.outside, path.join(ws.root, 'linkdir'));
    symlinkSync(path.join(ws.outside, 'not-yet.txt'), path.join(ws.root, 'dangling.txt'));
    symlinkSync('../outside', path.join(ws.root, 'up'));
    expect(() => where('link.txt')).toThrow(/symbolic link/);
    expect(() => where('linkdir/new/file.txt', { createParents: true })).toThrow(WorkspaceEscapeError);
    expect(() => where('dangling.txt')).toThrow(WorkspaceEscapeError);
    expect(() => where('up/secret.txt')).toThrow(WorkspaceEscapeError);
  });

  it('follows symlinks that stay inside (relative and absolute) to the canonical path', () => {
    ws.file('real/file.txt', 'x');
    symlinkSync(path.join(ws.root, 'real'), path.join(ws.root, 'alias'));
    symlinkSync('real/file.txt', path.join(ws.root, 'rel.txt'));
    expect(where('alias/file.txt').absolute).toBe(path.join(ws.root, 'real/file.txt'));
    expect(where('rel.txt').absolute).toBe(path.join(ws.root, 'real/file.txt'));
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

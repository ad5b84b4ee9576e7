import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gitTool } from '../../src/runtime/tools/builtin/git.js';
import { createTestWorkspace, runTool, type TestWorkspace } from './tool-test-context.js';

let ws: TestWorkspace;
const git = (...args: string[]): string => execFileSync('git', args, { cwd: ws.root, encoding: 'utf8' });
const run = (args: unknown) => runTool(gitTool, args, ws.context());

beforeEach(() => {
  ws = createTestWorkspace();
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'test@example.com');
  git('config', 'user.name', 'Test');
  git('config', 'commit.gpgsign', 'false');
  ws.file('a.txt', 'one\n');
  git('add', '.');
  git('commit', '-q', '-m', 'first commit');
  ws.file('a.txt', 'one\ntwo\n');
  git('commit', '-q', '-am', 'second commit');
});
afterEach(() => ws.cleanup());

describe('git: read-only commands', () => {
  it('status prints the seed block and metadata', async () => {
    const clean = await run({ command: 'status' });
    const head = git('rev-parse', '--short=7', 'HEAD').trim();
    expect(clean).toMatchObject({
      exitCode: 0,
      metadata: { branch: 'main', is_worktree: false, dirty_count: 0, is_dirty: false },
    });
    expect(clean.output).toBe(
      `Workspace: ${ws.root}\nBranch:    main\nCommit:    ${head}\nStatus:    clean\nWorktree:  no (main)`,
    );
    ws.file('a.txt', 'changed\n');
    ws.file('new.txt', 'n\n');
    const dirty = await run({ command: 'status' });
    expect(dirty.output).toContain('Status:    2 uncommitted change(s)');
    expect(dirty.metadata).toMatchObject({ dirty_count: 2, is_dirty: true });
  });

  it('log pages with limit and cursor; max_count is an alias of limit', async () => {
    const first = await run({ command: 'log', limit: 1 });
    expect(first.output).toMatch(
      /^Commit log \(1 entries from offset 0\):\n\n[0-9a-f]{7} - Test \(.+\)\n {2}second commit\n\nMore commits available; continue with cursor=1$/,
    );
    expect(first.metadata).toMatchObject({
      count: 1,
      page: { offset: 0, applied_limit: 1, next_cursor: '1', truncated: true },
    });
    const second = await run({ command: 'log', limit: 1, cursor: '1' });
    expect(second.output).toContain('first commit');
    expect(second.output).not.toContain('More commits');
    expect(second.metadata).toMatchObject({ page: { next_cursor: null, total_items: 2 } });
    expect((await run({ command: 'log', max_count: 2 })).metadata).toMatchObject({ count: 2 });
    expect((await run({ command: 'log', cursor: 'x' })).output).toMatch(/Invalid cursor/);
    expect(() => gitTool.parameters.parse({ command: 'log', limit: 201 })).toThrow();
  });

  it('branch lists, and creates with name from base', async () => {
    git('branch', 'feature');
    expect((await run({ command: 'branch' })).output).toBe('Branches:\n  feature\n* main');
    const paged = await run({ command: 'branch', limit: 1 });
    expect(paged.output).toBe('Branches:\n  feature\nMore branches available; continue with cursor=1');
    const created = await run({ command: 'branch', name: 'topic', base: 'HEAD~1' });
    expect(created).toMatchObject({
      exitCode: 0,
      output: 'Created branch: topic (based on HEAD~1)',
      metadata: { branch: 'topic', base: 'HEAD~1' },
    });
    expect(git('rev-parse', 'topic')).toBe(git('rev-parse', 'HEAD~1'));
    expect((await run({ command: 'branch', name: 'bad..name' })).output).toMatch(/Invalid branch name/);
  });

  it('diff shows the working tree or a target, paged by bytes on UTF-8 boundaries', async () => {
    expect((await run({ command: 'diff' })).output).toBe('No changes.');
    ws.file('a.txt', `one\ntwo\n${'界'.repeat(400)}\n`);
    const whole = await run({ command: 'diff' });
    expect(whole.output).toMatch(/^diff --git a\/a.txt b\/a.txt/);
    expect(whole.metadata).toMatchObject({ range: { byte_offset: 0, eof: true, next_byte_offset: null } });
    const first = await run({ command: 'diff', max_bytes: 256 });
    const range = (first.metadata as { range: { returned_bytes: number; next_byte_offset: number } }).range;
    expect(range.returned_bytes).toBeLessThanOrEqual(256);
    expect(first.output).toContain(`more diff available; continue with byte_offset=${range.next_byte_offset}`);
    const second = await run({ command: 'diff', max_bytes: 256, byte_offset: range.next_byte_offset });
    expect(second.output).not.toContain('diff --git');
    expect(second.output).not.toContain('\uFFFD');
    const vsTarget = await run({ command: 'diff', target: 'HEAD~1' });
    expect(vsTarget.output).toContain('+two');
    expect(() => gitTool.parameters.parse({ command: 'diff', max_bytes: 100 })).toThrow();
  });

  it('remote lists remotes without credentials', async () => {
    expect((await run({ command: 'remote' })).output).toBe('No remotes configured.');
    git('remote', 'add', 'origin', 'https://user:secret@example.com/repo.git?token=abc');
    const listed = await run({ command: 'remote' });
    expect(listed.output).toBe(
      'Remotes:\norigin\thttps://example.com/repo.git (fetch)\norigin\thttps://example.com/repo.git (push)',
    );
    expect(listed.output).not.toContain('secret');
  });
});

describe('git: commands that change the repository', () => {
  it('checkout switches branches and refuses unknown refs', async () => {
    git('branch', 'feature');
    const result = await run({ command: 'checkout', ref: 'feature' });
    expect(result).toMatchObject({ exitCode: 0 });
    expect(result.output).toMatch(/^Checked out: feature/);
    expect(git('branch', '--show-current').trim()).toBe('feature');
    expect((await run({ command: 'checkout', ref: 'nope' })).output).toMatch(/unknown revision "nope"/);
    expect(() => gitTool.parameters.parse({ command: 'checkout' })).toThrow(/ref is required/);
  });

  it('stash lists, and stashes with message or include_untracked', async () => {
    expect((await run({ command: 'stash' })).output).toBe('No stashes found.');
    ws.file('a.txt', 'dirty\n');
    expect(await run({ command: 'stash', message: 'wip one' })).toMatchObject({ exitCode: 0, output: 'Created stash' });
    expect(readFileSync(path.join(ws.root, 'a.txt'), 'utf8')).toBe('one\ntwo\n');
    ws.file('untracked.txt', 'u\n');
    expect((await run({ command: 'stash', include_untracked: true })).output).toBe('Created stash');
    expect(existsSync(path.join(ws.root, 'untracked.txt'))).toBe(false);
    const listed = await run({ command: 'stash' });
    expect(listed.output).toMatch(/^Stashes:\nstash@\{0\}: WIP on main: .+\nstash@\{1\}: On main: wip one$/);
    expect((await run({ command: 'stash', message: 'nothing' })).output).toBe('No local changes to save.');
  });

  it('worktree lists, creates inside the workspace and removes', async () => {
    const listed = await run({ command: 'worktree' });
    expect(listed.output).toBe(`Worktrees (1 of 1):\n  ${ws.root} [main]`);
    const created = await run({ command: 'worktree', subcommand: 'create', name: 'wt-branch' });
    expect(created).toMatchObject({
      exitCode: 0,
      output: 'Created worktree at: .worktrees/wt-branch\nBranch: wt-branch',
    });
    expect(readFileSync(path.join(ws.root, '.worktrees/wt-branch/a.txt'), 'utf8')).toBe('one\ntwo\n');
    const inWorktree = await runTool(
      gitTool,
      { command: 'status' },
      { ...ws.context(), workspace: path.join(ws.root, '.worktrees/wt-branch') },
    );
    expect(inWorktree.metadata).toMatchObject({ branch: 'wt-branch', is_worktree: true });
    expect((await run({ command: 'worktree', subcommand: 'remove', path: 'a.txt' })).output).toMatch(
      /not a linked worktree/,
    );
    expect((await run({ command: 'worktree', subcommand: 'remove', path: '.worktrees/wt-branch' })).output).toBe(
      'Removed worktree at: .worktrees/wt-branch',
    );
    expect(existsSync(path.join(ws.root, '.worktrees/wt-branch'))).toBe(false);
  });
});

describe('git: argument injection and confinement', () => {
  it('refuses option-like refs, names, targets and bases before anything runs', () => {
    const cases: unknown[] = [
      { command: 'checkout', ref: '--upload-pack=touch /tmp/pwned' },
      { command: 'checkout', ref: '-f' },
      { command: 'branch', name: '-D' },
      { command: 'branch', name: 'x', base: '--orphan' },
      { command: 'diff', target: '--output=/tmp/x' },
      { command: 'worktree', subcommand: 'create', name: '--detach' },
      { command: 'remote', remote_name: '-v' },
      { command: 'checkout', ref: 'main\nrm' },
      { command: 'push' },
      { command: 'status', args: ['--short'] },
      { command: 'log', name: 'x' },
      { command: 'branch', subcommand: 'create' },
      { command: 'diff', ref: 'HEAD' },
    ];
    for (const args of cases) expect(gitTool.parameters.safeParse(args).success, JSON.stringify(args)).toBe(false);
    expect(gitTool.parameters.safeParse({ command: 'branch', name: '-D' }).error?.issues[0]).toMatchObject({
      path: ['name'],
      message: 'name must not start with "-"',
    });
  });

  it('a ref that is a path or an option after --end-of-options does not change anything', async () => {
    ws.file('a.txt', 'local change\n');
    // "a.txt" is a file, not a revision: checkout must not treat it as a path and discard the change.
    expect((await run({ command: 'checkout', ref: 'a.txt' })).output).toMatch(/unknown revision/);
    expect(readFileSync(path.join(ws.root, 'a.txt'), 'utf8')).toBe('local change\n');
  });

  it('keeps worktree paths inside the workspace', async () => {
    symlinkSync(ws.outside, path.join(ws.root, 'out'));
    for (const where of ['../x', '/tmp/a3s-worktree-escape', 'out/wt']) {
      const result = await run({ command: 'worktree', subcommand: 'create', name: 'esc', path: where });
      expect(result.exitCode, where).toBe(1);
      expect(result.output).toMatch(/outside the workspace/);
    }
    expect(git('branch', '--list', 'esc')).toBe('');
    expect((await run({ command: 'worktree', subcommand: 'remove', path: '..' })).output).toMatch(
      /outside the workspace/,
    );
  });

  it('does not run repository-configured programs (hooks, filters, external diff, fsmonitor)', async () => {
    const marker = path.join(ws.outside, 'ran');
    const script = ws.file('evil.sh', `#!/bin/sh\necho ran >> ${marker}\ncat\n`);
    execFileSync('chmod', ['+x', script]);
    git('config', 'core.hooksPath', path.join(ws.root, 'hooks'));
    ws.file('hooks/post-checkout', `#!/bin/sh\necho hook >> ${marker}\n`);
    execFileSync('chmod', ['+x', path.join(ws.root, 'hooks/post-checkout')]);
    git('config', 'diff.external', script);
    git('config', 'core.fsmonitor', script);
    git('config', 'filter.evil.smudge', script);
    git('config', 'filter.evil.clean', script);
    git('config', 'core.pager', script);
    ws.file('.gitattributes', '*.txt filter=evil\n');
    git('branch', 'other');
    ws.file('a.txt', 'changed\n');
    await run({ command: 'status' });
    await run({ command: 'diff' });
    await run({ command: 'stash', message: 'x' });
    await run({ command: 'checkout', ref: 'other' });
    await run({ command: 'worktree', subcommand: 'create', name: 'wt' });
    expect(existsSync(marker)).toBe(false);
  });
});

describe('git: repository discovery and cancellation', () => {
  it('says "Not a git repository: <root>" outside a repository', async () => {
    const plain = path.join(ws.root, '..', 'plain');
    mkdirSync(plain);
    writeFileSync(path.join(plain, 'f.txt'), 'x');
    const result = await runTool(gitTool, { command: 'status' }, { ...ws.context(), workspace: plain });
    expect(result).toMatchObject({ exitCode: 1, output: `Not a git repository: ${plain}` });
  });

  it('stops discovery at the workspace instead of using a repository above it', async () => {
    const sub = path.join(ws.root, 'sub');
    mkdirSync(sub);
    const result = await runTool(gitTool, { command: 'status' }, { ...ws.context(), workspace: sub });
    expect(result.output).toBe(`Not a git repository: ${sub}`);
  });

  it('reports an unborn branch without failing', async () => {
    const fresh = path.join(ws.root, '..', 'fresh');
    mkdirSync(fresh);
    execFileSync('git', ['init', '-q', '-b', 'trunk'], { cwd: fresh });
    const ctx = { ...ws.context(), workspace: fresh };
    expect((await runTool(gitTool, { command: 'status' }, ctx)).output).toContain(
      'Branch:    trunk\nCommit:    (none)',
    );
    expect((await runTool(gitTool, { command: 'log' }, ctx)).output).toBe('No commits found.');
    expect((await runTool(gitTool, { command: 'branch' }, ctx)).output).toBe('No branches found.');
  });

  it('stops when the signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await runTool(gitTool, { command: 'log' }, ws.context(controller.signal));
    expect(result).toMatchObject({ exitCode: 1, metadata: { reason: 'cancelled' } });
  });
});

import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gitTool } from '../../src/runtime/tools/builtin/git.js';
import { createTestWorkspace, runTool, type TestWorkspace } from './tool-test-context.js';

let ws: TestWorkspace;
const git = (...args: string[]): string => execFileSync('git', args, { cwd: ws.root, encoding: 'utf8' });

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

describe('git', () => {
  it('status shows changes', async () => {
    ws.file('a.txt', 'changed\n');
    ws.file('new.txt', 'n\n');
    const result = await runTool(gitTool, { command: 'status', args: ['--short'] }, ws.context());
    expect(result).toMatchObject({ exitCode: 0, output: ' M a.txt\n?? new.txt\n' });
    const full = await runTool(gitTool, { command: 'status' }, ws.context());
    expect(full.output).toMatch(/On branch main/);
  });

  it('diff shows working-tree, staged and stat views, with paths', async () => {
    ws.file('a.txt', 'one\ntwo\nthree\n');
    const diff = await runTool(gitTool, { command: 'diff' }, ws.context());
    expect(diff.exitCode).toBe(0);
    expect(diff.output).toMatch(/\+three/);
    expect((await runTool(gitTool, { command: 'diff', args: ['--cached'] }, ws.context())).output).toBe('(no output)');
    git('add', 'a.txt');
    const staged = await runTool(gitTool, { command: 'diff', args: ['--cached', '--stat'] }, ws.context());
    expect(staged.output).toMatch(/a\.txt \| 1 \+/);
    const names = await runTool(gitTool, { command: 'diff', args: ['HEAD~1', '--name-only', '--', 'a.txt'] }, ws.context());
    expect(names.output).toBe('a.txt\n');
  });

  it('log and branch', async () => {
    const log = await runTool(gitTool, { command: 'log', args: ['--oneline', '-n', '1'] }, ws.context());
    expect(log.exitCode).toBe(0);
    expect(log.output).toMatch(/^[0-9a-f]+ second commit\n$/);
    const two = await runTool(gitTool, { command: 'log', args: ['--max-count=2', '--oneline'] }, ws.context());
    expect(two.output.trim().split('\n')).toHaveLength(2);
    git('branch', 'feature');
    const branches = await runTool(gitTool, { command: 'branch', args: ['-a'] }, ws.context());
    expect(branches.output).toBe('  feature\n* main\n');
    const listed = await runTool(gitTool, { command: 'branch', args: ['--list', 'feat*'] }, ws.context());
    expect(listed.output).toBe('  feature\n');
  });

  it('refuses flags outside the allow-list and arguments that would change the repository', async () => {
    const cases: Array<[string, string[]]> = [
      ['diff', ['--output=/tmp/x']],
      ['diff', ['--ext-diff']],
      ['log', ['-n', 'many']],
      ['log', ['--exec=rm -rf /']],
      ['status', ['--ignore-submodules=all', '-z']],
      ['branch', ['-D', 'main']],
      ['branch', ['new-branch']],
    ];
    for (const [command, args] of cases) {
      const result = await runTool(gitTool, { command, args }, ws.context());
      expect(result.exitCode, `${command} ${args.join(' ')}`).toBe(1);
      expect(result.metadata).toMatchObject({ reason: 'argument_refused' });
    }
    expect(git('branch', '--list')).toBe('* main\n');
    expect(() => gitTool.parameters.parse({ command: 'push' })).toThrow();
  });

  it('confines path arguments', async () => {
    symlinkSync(ws.outside, path.join(ws.root, 'out'));
    for (const arg of ['../outside', '/etc', 'out/secret.txt']) {
      const result = await runTool(gitTool, { command: 'diff', args: ['--', arg] }, ws.context());
      expect(result.exitCode).toBe(1);
      expect(result.output).toMatch(/outside the workspace/);
    }
  });

  it('says clearly when the workspace is not a git repository', async () => {
    const plain = path.join(ws.root, '..', 'plain');
    mkdirSync(plain);
    writeFileSync(path.join(plain, 'f.txt'), 'x');
    const result = await runTool(gitTool, { command: 'status' }, { ...ws.context(), workspace: plain });
    expect(result.exitCode).toBe(1);
    expect(result.output).toMatch(/not a git repository/);
  });

  it('stops discovery at the workspace instead of using a repository above it', async () => {
    const sub = path.join(ws.root, 'sub');
    mkdirSync(sub);
    const result = await runTool(gitTool, { command: 'status' }, { ...ws.context(), workspace: sub });
    expect(result.output).toMatch(/not a git repository/);
  });

  it('stops when the signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await runTool(gitTool, { command: 'log' }, ws.context(controller.signal));
    expect(result).toMatchObject({ exitCode: 1, metadata: { reason: 'cancelled' } });
  });
});

import { describe, expect, it } from 'vitest';
import {
  argumentString,
  BUILTIN_DEFAULT_POLICY,
  evaluatePermission,
} from '../../src/runtime/policy/permission-policy.js';
import { gitTool } from '../../src/runtime/tools/builtin/git.js';
import { isGitReadOnly } from '../../src/runtime/tools/builtin/git-params.js';
import { isReadOnlyCall } from '../../src/runtime/tools/define-tool.js';

// Every form of git call, read-only or not; the built-in default policy must allow exactly the read-only ones.
const CALLS: Array<[Record<string, unknown>, boolean]> = [
  [{ command: 'status' }, true],
  [{ command: 'log' }, true],
  [{ command: 'log', max_count: 5 }, true],
  [{ command: 'log', limit: 5, cursor: '10' }, true],
  [{ command: 'diff' }, true],
  [{ command: 'diff', target: 'origin/main', max_bytes: 1024, byte_offset: 10 }, true],
  [{ command: 'remote' }, true],
  [{ command: 'remote', remote_name: 'origin', limit: 3 }, true],
  [{ command: 'branch' }, true],
  [{ command: 'branch', limit: 5 }, true],
  [{ command: 'branch', cursor: '5' }, true],
  [{ command: 'branch', name: 'feature' }, false],
  [{ command: 'branch', name: 'feature/x', base: 'HEAD~1' }, false],
  [{ command: 'checkout', ref: 'main' }, false],
  [{ command: 'checkout', ref: 'main', force: true }, false],
  [{ command: 'stash' }, true],
  [{ command: 'stash', limit: 2, cursor: '2' }, true],
  [{ command: 'stash', include_untracked: false }, true],
  [{ command: 'stash', include_untracked: false, limit: 2 }, true],
  [{ command: 'stash', message: 'wip' }, false],
  [{ command: 'stash', include_untracked: true }, false],
  [{ command: 'stash', message: 'wip', include_untracked: false }, false],
  [{ limit: 2, command: 'stash', message: 'keys in another order' }, false],
  [{ command: 'worktree' }, true],
  [{ command: 'worktree', subcommand: 'list', limit: 2 }, true],
  [{ command: 'worktree', cursor: '1' }, true],
  [{ command: 'worktree', subcommand: 'create', name: 'wt' }, false],
  [{ command: 'worktree', subcommand: 'create', name: 'wt', path: 'trees/wt', new_branch: false }, false],
  [{ command: 'worktree', subcommand: 'remove', path: 'trees/wt', force: true }, false],
];

describe('git read-only per call', () => {
  it.each(CALLS)('%j is read-only: %s', (args, readOnly) => {
    expect(isGitReadOnly(args)).toBe(readOnly);
    expect(isReadOnlyCall(gitTool, args)).toBe(readOnly);
    // The policy sees the parsed arguments (schema key order), as the permission stage does.
    const parsed = gitTool.parameters.parse(args);
    const verdict = evaluatePermission(BUILTIN_DEFAULT_POLICY, 'git', parsed);
    expect(verdict.decision, argumentString('git', parsed)).toBe(readOnly ? 'allow' : 'ask');
  });

  it('is not read-only for every call, and invalid arguments are never read-only', () => {
    expect(gitTool.readOnly).toBe(false);
    expect(isReadOnlyCall(gitTool)).toBe(false);
    expect(isGitReadOnly({ command: 'status', extra: 1 })).toBe(false);
    expect(isGitReadOnly('status')).toBe(false);
  });
});

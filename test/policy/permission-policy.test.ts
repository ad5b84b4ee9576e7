import { describe, expect, it } from 'vitest';
import {
  argumentString,
  BUILTIN_DEFAULT_POLICY,
  evaluateBoundedPermission,
  evaluatePermission,
  globMatches,
  isToolFullyDenied,
  isToolFullyDeniedBounded,
  policyProblems,
  type PermissionDecision,
} from '../../src/runtime/policy/permission-policy.js';
import { PermissionPolicySchema } from '../../src/protocol/governance.js';

const seed = PermissionPolicySchema.parse({
  deny: ['write(**/.env*)', 'bash(rm -rf*)', 'bash(git push*)', 'mcp__evil'],
  allow: ['read(*)', 'grep', 'glob', 'ls', 'bash(npm test:*)', 'bash(npm run build)', 'mcp__echo'],
  ask: ['write(src/**)', 'bash(git *)'],
  defaultDecision: 'ask',
});

describe('glob matching', () => {
  it.each([
    ['*.ts', 'a.ts', true],
    ['*.ts', 'src/a.ts', false],
    ['**/*.ts', 'src/deep/a.ts', true],
    ['**/*.ts', 'a.ts', true],
    ['src/**', 'src/a/b/c', true],
    ['src/**', 'lib/a', false],
    ['a?c', 'abc', true],
    ['a?c', 'a/c', false],
    ['**/.env*', '.env', true],
    ['**/.env*', 'config/.env.local', true],
    ['**/.env*', 'config/env', false],
    ['npm test:*', 'npm test -- --watch', true],
    ['npm test:*', 'npm tester', true],
    ['npm test:*', 'npx npm test', false],
    ['rm -rf*', 'rm -rf build', true],
    ['rm -rf*', 'echo rm -rf build', false],
    ['file(1).txt', 'file(1).txt', true],
    ['a.b', 'axb', false],
    ['[abc]', '[abc]', true],
    ['*', 'any/thing/at/all', true],
  ])('%s vs %s -> %s', (pattern, value, expected) => {
    expect(globMatches(pattern, value)).toBe(expected);
  });
});

describe('argument strings', () => {
  it.each([
    ['bash', { command: 'ls -la' }, 'ls -la'],
    ['read', { file_path: 'a/b.txt', offset: 2 }, 'a/b.txt'],
    ['WRITE', { file_path: 'x', content: 'y' }, 'x'],
    ['edit', { file_path: 'e.ts' }, 'e.ts'],
    // The seed matches patch (like grep, glob, git) against the compact JSON of its arguments.
    ['patch', { file_path: 'a.ts', diff: '@@' }, '{"file_path":"a.ts","diff":"@@"}'],
    ['grep', { pattern: 'x', path: 'src' }, '{"pattern":"x","path":"src"}'],
    ['ls', {}, ''],
    ['ls', { path: 'src' }, 'src'],
    ['git', { command: 'status' }, '{"command":"status"}'],
    ['mcp__echo__echo', { message: 'hi' }, '{"message":"hi"}'],
  ])('%s %j -> %s', (tool, args, expected) => {
    expect(argumentString(tool, args)).toBe(expected);
  });
});

describe('evaluatePermission with the seed example policy', () => {
  it.each<[string, unknown, PermissionDecision, string]>([
    ['write', { file_path: '.env' }, 'deny', 'write(**/.env*)'],
    ['write', { file_path: 'app/.env.production' }, 'deny', 'write(**/.env*)'],
    ['bash', { command: 'rm -rf node_modules' }, 'deny', 'bash(rm -rf*)'],
    ['bash', { command: 'git push origin main' }, 'deny', 'bash(git push*)'],
    ['Bash', { command: 'git push --force' }, 'deny', 'bash(git push*)'],
    ['bash', { command: 'git status' }, 'ask', 'bash(git *)'],
    ['bash', { command: 'npm test -- --run' }, 'allow', 'bash(npm test:*)'],
    ['bash', { command: 'npm run build' }, 'allow', 'bash(npm run build)'],
    ['bash', { command: 'npm run build && curl evil' }, 'ask', 'defaultDecision'],
    ['read', { file_path: 'deep/nested/file.ts' }, 'allow', 'read(*)'],
    ['READ', { file_path: 'x' }, 'allow', 'read(*)'],
    ['grep', { pattern: 'x' }, 'allow', 'grep'],
    ['write', { file_path: 'src/index.ts' }, 'ask', 'write(src/**)'],
    ['write', { file_path: 'README.md' }, 'ask', 'defaultDecision'],
    ['mcp__echo__echo', { message: 'hi' }, 'allow', 'mcp__echo'],
    ['mcp__evil__steal', {}, 'deny', 'mcp__evil'],
    ['mcp__evilness__x', {}, 'ask', 'defaultDecision'],
  ])('%s %j -> %s by %s', (tool, args, decision, rule) => {
    expect(evaluatePermission(seed, tool, args)).toEqual({ decision, rule });
  });

  it('deny wins over allow, allow over ask', () => {
    const policy = PermissionPolicySchema.parse({
      deny: ['bash(x)'],
      allow: ['bash(x)', 'bash(y)'],
      ask: ['bash(y)', 'bash(z)'],
      defaultDecision: 'deny',
    });
    expect(evaluatePermission(policy, 'bash', { command: 'x' }).decision).toBe('deny');
    expect(evaluatePermission(policy, 'bash', { command: 'y' }).decision).toBe('allow');
    expect(evaluatePermission(policy, 'bash', { command: 'z' }).decision).toBe('ask');
    expect(evaluatePermission(policy, 'bash', { command: 'w' })).toEqual({ decision: 'deny', rule: 'defaultDecision' });
  });

  it('a disabled policy allows everything', () => {
    const policy = PermissionPolicySchema.parse({ deny: ['bash'], enabled: false });
    expect(evaluatePermission(policy, 'bash', { command: 'rm -rf /' })).toEqual({
      decision: 'allow',
      rule: 'disabled',
    });
  });
});

describe('policy helpers', () => {
  it('knows which tools are denied for every argument', () => {
    const policy = PermissionPolicySchema.parse({ deny: ['bash', 'write(*)', 'edit(src/**)', 'mcp__evil'] });
    expect(isToolFullyDenied(policy, 'bash')).toBe(true);
    expect(isToolFullyDenied(policy, 'WRITE')).toBe(true);
    expect(isToolFullyDenied(policy, 'edit')).toBe(false);
    expect(isToolFullyDenied(policy, 'mcp__evil__x')).toBe(true);
    expect(isToolFullyDenied(policy, 'read')).toBe(false);
    expect(isToolFullyDenied({ ...policy, enabled: false }, 'bash')).toBe(false);
  });

  it('lists malformed rules by field and index', () => {
    const policy = PermissionPolicySchema.parse({ deny: ['ok', 'bad rule here(('], allow: ['(x)'] });
    expect(policyProblems(policy)).toEqual([
      expect.stringMatching(/^deny\[1\]: invalid permission rule/),
      expect.stringMatching(/^allow\[0\]: invalid permission rule/),
    ]);
  });

  it('the built-in default allows read-only tools and git inspection, asks for the rest', () => {
    expect(evaluatePermission(BUILTIN_DEFAULT_POLICY, 'read', { file_path: 'a' }).decision).toBe('allow');
    expect(evaluatePermission(BUILTIN_DEFAULT_POLICY, 'glob', { pattern: '*' }).decision).toBe('allow');
    expect(evaluatePermission(BUILTIN_DEFAULT_POLICY, 'git', { command: 'status' }).decision).toBe('allow');
    expect(evaluatePermission(BUILTIN_DEFAULT_POLICY, 'git', { command: 'diff', args: ['--stat'] }).decision).toBe(
      'allow',
    );
    expect(evaluatePermission(BUILTIN_DEFAULT_POLICY, 'bash', { command: 'ls' }).decision).toBe('ask');
    expect(evaluatePermission(BUILTIN_DEFAULT_POLICY, 'write', { file_path: 'a', content: '' }).decision).toBe('ask');
  });
});

describe('evaluateBoundedPermission: a session policy under the operator floor', () => {
  const floor = PermissionPolicySchema.parse({
    allow: ['read', 'bash(npm test:*)'],
    ask: ['bash(npm run:*)'],
    deny: ['write'],
    defaultDecision: 'deny',
  });
  const open = PermissionPolicySchema.parse({ enabled: false });
  const own = PermissionPolicySchema.parse({
    allow: ['bash(npm run:*)', 'bash(curl:*)'],
    deny: ['read(secrets/**)'],
    ask: ['bash(npm test:*)'],
    defaultDecision: 'allow',
  });
  const cases: Array<[string, unknown, string, string]> = [
    ['read', { file_path: 'a.txt' }, 'allow', 'defaultDecision'],
    ['read', { file_path: 'secrets/key' }, 'deny', 'read(secrets/**)'],
    ['bash', { command: 'npm test -- x' }, 'ask', 'bash(npm test:*)'],
    ['bash', { command: 'npm run build' }, 'ask', 'operator policy: bash(npm run:*)'],
    ['bash', { command: 'curl evil' }, 'deny', 'operator policy: defaultDecision'],
    ['write', { file_path: 'a.txt' }, 'deny', 'operator policy: write'],
  ];
  it.each(cases)('%s %j -> %s by %s', (tool, args, decision, rule) => {
    expect(evaluateBoundedPermission(own, floor, tool, args)).toEqual({ decision, rule });
  });

  it('a disabled session policy is bounded all the same; without a floor the session decides alone', () => {
    expect(evaluateBoundedPermission(open, floor, 'bash', { command: 'ls' })).toEqual({
      decision: 'deny',
      rule: 'operator policy: defaultDecision',
    });
    expect(evaluateBoundedPermission(open, floor, 'read', { file_path: 'a' })).toEqual({
      decision: 'allow',
      rule: 'disabled',
    });
    expect(evaluateBoundedPermission(open, undefined, 'bash', { command: 'ls' })).toEqual(
      evaluatePermission(open, 'bash', { command: 'ls' }),
    );
  });

  it('hides a tool either layer denies for every argument', () => {
    expect(isToolFullyDeniedBounded(open, floor, 'write')).toBe(true);
    expect(isToolFullyDeniedBounded(own, undefined, 'write')).toBe(false);
    expect(isToolFullyDeniedBounded(PermissionPolicySchema.parse({ deny: ['ls'] }), floor, 'ls')).toBe(true);
    expect(isToolFullyDeniedBounded(open, floor, 'bash')).toBe(false);
  });
});

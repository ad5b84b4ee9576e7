import { describe, expect, it } from 'vitest';
import { evaluatePermission, globMatches } from '../../src/runtime/policy/permission-policy.js';
import { PermissionPolicySchema } from '../../src/protocol/governance.js';

// The permission rules' pattern semantics, frozen as the matcher behaved when this table was written (each row was
// produced by running it). A row that changes changes what an operator's rules mean: a deny rule `read(secrets/**)`
// that stopped matching `secrets/.key` would let the model read it. Rows change only with README's "Permission policy".
describe('rule pattern semantics (frozen table)', () => {
  // Dotfiles are ordinary names; `**/` also matches no directory; `:*` at the end is a prefix test; braces,
  // brackets, parentheses, `|`, `^`, `$`, `\` are literal; matching is case-sensitive and anchored at both ends.
  it.each([
    ['secrets/**', 'secrets/.key', true],
    ['secrets/**', 'secrets/a/.hidden/b', true],
    ['secrets/**', 'secrets', false],
    ['secrets/**', 'secrets/', true],
    ['secrets/**', 'other/secrets/x', false],
    ['*', '.env', true],
    ['*.ts', '.hidden.ts', true],
    ['**', '.git/config', true],
    ['.*', '.env', true],
    ['src/*', 'src/.env', true],
    ['src/*', 'src/a/b', false],
    ['**/.env', '.env', true],
    ['**/.env', 'a/b/.env', true],
    ['**/.env', 'a/.env/x', false],
    ['**/*.ts', 'a.ts', true],
    ['**/*.ts', '/abs/a.ts', true],
    ['**/*.ts', 'a.tsx', false],
    ['a/**/b', 'a/b', true],
    ['a/**/b', 'a/x/y/b', true],
    ['a/**/b', 'ab', false],
    ['a/**b', 'a/x/yb', true],
    ['a**', 'a/b/c', true],
    ['/etc/**', '/etc/passwd', true],
    ['/etc/**', 'etc/passwd', false],
    ['npm:*', 'npm', true],
    ['npm:*', 'npm install', true],
    ['npm:*', 'npmx', true],
    ['npm:*', 'npx', false],
    ['npm test:*', 'npm test', true],
    ['npm test:*', 'npm tests', true],
    ['git:*', 'git push --force', true],
    ['a:*b', 'a:xb', true],
    ['a:*b', 'a', false],
    [':*', 'anything', true],
    ['a:**', 'a:x', true],
    ['a:**', 'a', false],
    ['{a,b}.ts', 'a.ts', false],
    ['{a,b}.ts', '{a,b}.ts', true],
    ['*.{js,ts}', 'x.ts', false],
    ['*.{js,ts}', 'x.{js,ts}', true],
    ['[ab].ts', 'a.ts', false],
    ['[ab].ts', '[ab].ts', true],
    ['!(a).ts', 'b.ts', false],
    ['!(a).ts', '!(a).ts', true],
    ['+(a)', 'a', false],
    ['a|b', 'a', false],
    ['a|b', 'a|b', true],
    ['a$', 'a$', true],
    ['^a', '^a', true],
    ['a\\*', 'a\\x', true],
    ['a\\*', 'a*', false],
    ['a.ts', 'aXts', false],
    ['a?c', 'abc', true],
    ['a?c', 'ac', false],
    ['a?c', 'a/c', false],
    ['a??', 'a.b', true],
    ['README.md', 'readme.md', false],
    ['*.MD', 'x.md', false],
    ['Src/**', 'src/a', false],
    ['src', 'src/a', false],
    ['src', 'x/src', false],
    ['src/a', 'src/a/', false],
    ['*', '', true],
    ['**', '', true],
    ['', '', true],
    ['', 'a', false],
    ['a*', 'a', true],
    ['a*', 'a\nb', true],
    ['a/*', 'a/\n', true],
    ['rm -rf *', 'rm -rf /', false],
    ['rm -rf *', 'rm -rf a/b', false],
    ['rm -rf **', 'rm -rf a/b', true],
    ['git({"command":"status"**)', 'git({"command":"status","x":1})', true],
    ['{"command":"status"**', '{"command":"status","path":"a/b"}', true],
    ['{"command":"status"**', '{"command":"statusx"}', false],
  ] as const)('%j vs %j -> %s', (pattern, value, expected) => {
    expect(globMatches(pattern, value)).toBe(expected);
  });
});

describe('rule semantics through a policy (frozen table)', () => {
  // Tool names are case-insensitive, patterns are not; `mcp__server` covers that server's tools only.
  const policy = PermissionPolicySchema.parse({
    deny: ['read(secrets/**)', 'Write(**/.env*)', 'mcp__evil', 'bash(npm publish:*)'],
    allow: ['READ', 'bash(npm:*)', 'mcp__echo', 'glob({"pattern":"*"**)'],
    ask: ['write(src/**)'],
    defaultDecision: 'deny',
  });
  it.each([
    ['read', { file_path: 'secrets/.key' }, 'deny', 'read(secrets/**)'],
    ['read', { file_path: 'secrets/a/b' }, 'deny', 'read(secrets/**)'],
    ['Read', { file_path: 'SECRETS/.key' }, 'allow', 'READ'],
    ['read', { file_path: 'src/.env' }, 'allow', 'READ'],
    ['write', { file_path: '.env' }, 'deny', 'Write(**/.env*)'],
    ['write', { file_path: 'a/.env.local' }, 'deny', 'Write(**/.env*)'],
    ['write', { file_path: 'src/a.ts' }, 'ask', 'write(src/**)'],
    ['write', { file_path: 'lib/a.ts' }, 'deny', 'defaultDecision'],
    ['bash', { command: 'npm install' }, 'allow', 'bash(npm:*)'],
    ['bash', { command: 'npm publish --tag x' }, 'deny', 'bash(npm publish:*)'],
    ['bash', { command: 'npx tsc' }, 'deny', 'defaultDecision'],
    ['mcp__evil__run', {}, 'deny', 'mcp__evil'],
    ['mcp__echo__say', { text: 'x' }, 'allow', 'mcp__echo'],
    ['mcp__echoes__say', {}, 'deny', 'defaultDecision'],
    ['MCP__ECHO__say', {}, 'allow', 'mcp__echo'],
    ['glob', { pattern: '*.ts' }, 'allow', 'glob({"pattern":"*"**)'],
    ['glob', { pattern: 'src/**', path: 'a' }, 'deny', 'defaultDecision'],
    ['ls', { path: '.' }, 'deny', 'defaultDecision'],
  ] as const)('%s %j -> %s by %s', (tool, args, decision, rule) => {
    expect(evaluatePermission(policy, tool, args)).toEqual({ decision, rule });
  });
});

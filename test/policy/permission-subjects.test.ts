import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PermissionPolicySchema } from '../../src/protocol/governance.js';
import { workspacePathResolver } from '../../src/runtime/invocation/call-subjects.js';
import { mcpPathArguments } from '../../src/runtime/mcp/mcp-path-arguments.js';
import {
  evaluatePermission,
  reachesBelow,
  type PermissionDecision,
} from '../../src/runtime/policy/permission-policy.js';
import { CallSubjects } from '../../src/runtime/policy/permission-subjects.js';
import { createBuiltinTools } from '../../src/runtime/tools/builtin-tools.js';
import { pinDirectory, WorkspaceDirectory } from '../../src/runtime/workspace/workspace-directory.js';

// A workspace with a secret directory, a symlink to it, and a symlink to a file in it.
const ws = realpathSync(mkdtempSync(path.join(tmpdir(), 'a3s-subjects-')));
mkdirSync(path.join(ws, 'src', 'secret'), { recursive: true });
mkdirSync(path.join(ws, 'docs'));
writeFileSync(path.join(ws, 'src', 'secret', 'key.txt'), 'k');
writeFileSync(path.join(ws, 'src', 'a.ts'), 'a');
symlinkSync('src/secret', path.join(ws, 'innocent'));
symlinkSync('../src/secret/key.txt', path.join(ws, 'docs', 'readme.md'));
const resolve = workspacePathResolver(new WorkspaceDirectory(pinDirectory(ws)));
const tools = new Map(createBuiltinTools().map((tool) => [tool.name, tool]));

function decide(
  rules: Partial<Record<'deny' | 'allow' | 'ask', string[]>>,
  tool: string,
  args: unknown,
): PermissionDecision {
  const policy = PermissionPolicySchema.parse({ defaultDecision: 'ask', ...rules });
  const declared = tools.get(tool)?.permissionPaths as ((a: unknown) => { path: string }[]) | undefined;
  const subjects = new CallSubjects(tool, args, declared, ws, resolve);
  return evaluatePermission(policy, tool, args, { workspace: ws, subjects }).decision;
}

describe('old rules keep their meaning on new calls (the seed forms of SEED-REFERENCE §3.2)', () => {
  // [rules, tool, args, decision]: every deny rule written in the seed's forms still denies.
  const table: [
    Partial<Record<'deny' | 'allow' | 'ask', string[]>>,
    string,
    Record<string, unknown>,
    PermissionDecision,
  ][] = [
    [{ deny: ['read(src/secret/**)'] }, 'read', { file_path: 'src/secret/key.txt' }, 'deny'],
    [{ deny: ['read(src/secret/**)'] }, 'read', { file_path: 'src/a.ts' }, 'ask'],
    [{ deny: ['write(**/.env*)'] }, 'write', { file_path: 'config/.env.local', content: '' }, 'deny'],
    [{ deny: ['write(./src/**)'] }, 'write', { file_path: './src/a.ts', content: '' }, 'deny'],
    [{ deny: ['write(./src/**)'] }, 'write', { file_path: 'src/a.ts', content: '' }, 'deny'],
    [{ allow: ['read(./src/**)'] }, 'read', { file_path: 'src/a.ts' }, 'allow'],
    [{ deny: [`read(${ws}/src/secret/**)`] }, 'read', { file_path: 'src/secret/key.txt' }, 'deny'],
    [{ deny: [`read(${ws}/src/secret/**)`] }, 'read', { file_path: `${ws}/src/secret/key.txt` }, 'deny'],
    [{ deny: ['read(/etc/**)'] }, 'read', { file_path: '/etc/passwd' }, 'deny'],
    [{ deny: ['ls(src/secret)'] }, 'ls', { path: 'src/secret' }, 'deny'],
    [{ deny: ['ls(src/secret)'] }, 'ls', { path: 'src/./secret/' }, 'deny'],
    [{ deny: ['grep({"pattern":"password"**)'] }, 'grep', { pattern: 'password' }, 'deny'],
    [{ deny: ['grep({"pattern":"password"**)'] }, 'grep', { pattern: 'token' }, 'ask'],
    [{ deny: ['glob({"pattern":"**/*.pem"**)'] }, 'glob', { pattern: '**/*.pem' }, 'deny'],
    [{ deny: ['git({"command":"checkout"**)'] }, 'git', { command: 'checkout', ref: 'main' }, 'deny'],
    [{ deny: ['patch'] }, 'patch', { file_path: 'src/a.ts', diff: '@@' }, 'deny'],
    [{ deny: ['patch(*)'] }, 'patch', { file_path: 'src/a.ts', diff: '@@' }, 'deny'],
    [{ deny: ['patch({"file_path":"src/a.ts"**)'] }, 'patch', { file_path: 'src/a.ts', diff: '@@' }, 'deny'],
    [{ deny: ['mcp__fs'] }, 'mcp__fs__read', { path: 'x' }, 'deny'],
    // The default policy's compact-JSON allow rules for git keep allowing exactly what they did.
    [{ allow: ['git({"command":"status"**)'] }, 'git', { command: 'status' }, 'allow'],
    [{ allow: ['git({"command":"status"**)'] }, 'git', { command: 'checkout', ref: 'x' }, 'ask'],
    [{ allow: ['read(*)'] }, 'read', { file_path: 'src/secret/key.txt' }, 'allow'],
    [{ allow: ['grep'] }, 'grep', { pattern: 'x' }, 'allow'],
    // New: path rules now match the tools the seed gave only compact JSON.
    [{ allow: ['patch(src/**)'] }, 'patch', { file_path: 'src/a.ts', diff: '@@' }, 'allow'],
    [{ allow: ['patch(src/**)'] }, 'patch', { file_path: 'docs/x.md', diff: '@@' }, 'ask'],
    [{ deny: ['patch(src/secret/**)'] }, 'patch', { file_path: 'src/secret/key.txt', diff: '@@' }, 'deny'],
    [{ allow: ['grep(src/**)'] }, 'grep', { pattern: 'x', path: 'src' }, 'allow'],
    [{ allow: ['grep(src/**)'] }, 'grep', { pattern: 'x' }, 'ask'],
    [{ deny: ['grep(src/secret/**)'] }, 'grep', { pattern: 'x', path: 'src/secret' }, 'deny'],
    [{ allow: ['glob(src/**)'] }, 'glob', { pattern: '*.ts', path: 'src' }, 'allow'],
    [{ deny: ['glob(src/secret/**)'] }, 'glob', { pattern: 'src/secret/*.txt' }, 'deny'],
    [{ deny: ['git(.worktrees/**)'] }, 'git', { command: 'worktree', subcommand: 'create', name: 'x' }, 'deny'],
    [{ allow: ['write(src/**)'] }, 'write', { file_path: 'src/new/file.ts', content: '' }, 'allow'],
  ];
  it.each(table)('%j %s %j -> %s', (rules, tool, args, expected) => {
    expect(decide(rules, tool, args)).toBe(expected);
  });
});

describe('a deny on src/secret/** cannot be dodged by spelling', () => {
  const deny = { deny: ['read(src/secret/**)', 'write(src/secret/**)', 'edit(src/secret/**)', 'grep(src/secret/**)'] };
  const allowAll = { ...deny, allow: ['read(**)', 'write(**)', 'edit(**)', 'grep(**)'] };
  it.each([
    ['read', { file_path: './src/secret/key.txt' }],
    ['read', { file_path: 'src/../src/secret/key.txt' }],
    ['read', { file_path: 'src//secret///key.txt' }],
    ['read', { file_path: 'src/./secret/./key.txt' }],
    ['read', { file_path: 'docs/../src/secret/key.txt' }],
    ['read', { file_path: `${ws}/src/secret/key.txt` }],
    ['read', { file_path: `${ws}//src/../src/secret/key.txt` }],
    ['read', { file_path: 'src\\secret\\key.txt' }],
    ['read', { file_path: 'innocent/key.txt' }],
    ['read', { file_path: 'docs/readme.md' }],
    ['read', { file_path: `${ws}/innocent/key.txt` }],
    ['write', { file_path: 'innocent/new/deep.txt', content: 'x' }],
    ['write', { file_path: 'innocent/../innocent/key.txt', content: 'x' }],
    ['edit', { file_path: 'docs/readme.md', old_string: 'k', new_string: 'x' }],
    ['grep', { pattern: 'k', path: 'innocent' }],
    ['grep', { pattern: 'k', path: './src' }],
    ['grep', { pattern: 'k' }],
  ])('%s %j is denied, even where allow rules cover everything else', (tool, args) => {
    expect(decide(deny, tool, args)).toBe('deny');
    expect(decide(allowAll, tool, args)).toBe('deny');
  });

  it('an allow rule does not allow through a symlink what it does not allow at the target', () => {
    expect(decide({ allow: ['read(docs/**)'] }, 'read', { file_path: 'docs/readme.md' })).toBe('ask');
    expect(decide({ allow: ['read(docs/**)', 'read(src/**)'] }, 'read', { file_path: 'docs/readme.md' })).toBe('allow');
    expect(decide({ allow: ['read(src/**)'] }, 'read', { file_path: 'src/../docs/readme.md' })).toBe('ask');
    // On Linux `src\\x` is one name at the top, not a file in src: a src/** allow does not cover it.
    expect(decide({ allow: ['read(src/**)'] }, 'read', { file_path: 'src\\a.ts' })).toBe('ask');
    expect(decide({ allow: ['read(src/**)'] }, 'read', { file_path: 'src/a.ts' })).toBe('allow');
    expect(decide({ allow: ['write(src/**)'] }, 'write', { file_path: 'src/../../outside.txt', content: '' })).toBe(
      'ask',
    );
  });
});

describe('several subjects: allowed only if every one is, denied if any is', () => {
  const declared = () => [{ path: 'src/a.ts' }, { path: 'docs/x.md' }];
  const run = (rules: Partial<Record<'deny' | 'allow' | 'ask', string[]>>) =>
    evaluatePermission(
      PermissionPolicySchema.parse({ defaultDecision: 'ask', ...rules }),
      'mcp__fs__read_many',
      {},
      {
        workspace: ws,
        subjects: new CallSubjects('mcp__fs__read_many', {}, declared, ws, resolve),
      },
    );
  it('decides on every path', () => {
    expect(run({ allow: ['mcp__fs__read_many(src/**)'] }).decision).toBe('ask');
    expect(run({ allow: ['mcp__fs__read_many(src/**)', 'mcp__fs__read_many(docs/**)'] })).toEqual({
      decision: 'allow',
      rule: 'mcp__fs__read_many(src/**), mcp__fs__read_many(docs/**)',
    });
    expect(run({ allow: ['mcp__fs__read_many(**)'], deny: ['mcp__fs__read_many(docs/**)'] }).decision).toBe('deny');
    expect(
      run({ allow: ['mcp__fs(src/**)'], ask: ['mcp__fs(docs/*)'], defaultDecision: 'deny' } as never).decision,
    ).toBe('ask');
  });
});

describe('a search base reaches what lies below it', () => {
  it.each([
    ['src/secret/**', '.', true],
    ['src/secret/**', 'src', true],
    ['src/secret/**', 'src/secret', true],
    ['src/secret/**', 'docs', false],
    ['src/*/key', 'src/secret', true],
    ['src/*.ts', 'src/secret', false],
    ['**/.env*', 'deep/dir', true],
    ['/etc/**', '.', false],
    [`${ws}/src/**`, ws, true],
    ['src/sec:*', 'src', true],
    ['lib/:*', 'src', false],
  ])('%s below %s: %s', (pattern, dir, expected) => {
    expect(reachesBelow(pattern, dir)).toBe(expected);
  });
});

describe('MCP path arguments by input schema', () => {
  it('picks path-like string and string-array properties and nothing else', () => {
    expect(
      mcpPathArguments({
        type: 'object',
        properties: {
          path: { type: 'string' },
          paths: { type: 'array', items: { type: 'string' } },
          source_path: { type: 'string' },
          targetPath: { type: 'string' },
          where: { type: 'string', format: 'path' },
          base: { type: 'string', description: 'Directory path to search from.' },
          query: { type: 'string', description: 'What to look for.' },
          file: { type: 'number' },
          pathological: { type: 'string' },
        },
      }),
    ).toEqual(['path', 'paths', 'source_path', 'targetPath', 'where', 'base']);
    expect(mcpPathArguments(undefined)).toEqual([]);
    expect(mcpPathArguments({ type: 'object' })).toEqual([]);
  });
});

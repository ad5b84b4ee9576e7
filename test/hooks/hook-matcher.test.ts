import { describe, expect, it } from 'vitest';
import type { HookMatcher } from '../../src/protocol/hooks.js';
import {
  hookMatches,
  pathCandidates,
  wildcardMatches,
  type HookTarget,
} from '../../src/runtime/policy/hooks/hook-matcher.js';

const bash = (command: string, sessionId = 's1'): HookTarget => ({ toolName: 'bash', args: { command }, sessionId });
const write = (file_path: string, workspace?: string): HookTarget => ({
  toolName: 'write',
  args: { file_path, content: 'x' },
  sessionId: 's1',
  workspace,
});

describe('hook matchers', () => {
  it.each<[string, HookMatcher | undefined, HookTarget, boolean]>([
    ['no matcher', undefined, bash('ls'), true],
    ['empty matcher', {}, { sessionId: 's1' }, true],
    ['tool exact, case-insensitive', { tool: 'Bash' }, bash('ls'), true],
    ['tool other', { tool: 'read' }, bash('ls'), false],
    ['tool glob', { tool: 'mcp__github__*' }, { toolName: 'mcp__github__create_issue', sessionId: 's1' }, true],
    ['tool glob other server', { tool: 'mcp__github__*' }, { toolName: 'mcp__gitlab__x', sessionId: 's1' }, false],
    ['tool without a tool', { tool: '*' }, { sessionId: 's1' }, false],
    ['command prefix crosses /', { commandPattern: 'rm -rf *' }, bash('rm -rf /tmp/x'), true],
    ['command is anchored', { commandPattern: 'rm *' }, bash('echo rm x'), false],
    ['command ? is one char', { commandPattern: 'l?' }, bash('ls'), true],
    ['command with regex characters', { commandPattern: 'npm test (unit)*' }, bash('npm test (unit) --watch'), true],
    [
      'command without a command',
      { commandPattern: '*' },
      { toolName: 'read', args: { file_path: 'a' }, sessionId: 's1' },
      false,
    ],
    ['path ** glob', { pathPattern: 'src/**/*.ts' }, write('src/a/b.ts'), true],
    ['path * stays in a segment', { pathPattern: 'src/*.ts' }, write('src/a/b.ts'), false],
    ['path ./ prefix ignored', { pathPattern: 'src/**' }, write('./src/a.ts'), true],
    ['path .. resolved', { pathPattern: 'secrets/**' }, write('src/../secrets/key'), true],
    ['absolute path inside the workspace', { pathPattern: 'src/**' }, write('/work/ws/src/a.ts', '/work/ws'), true],
    ['relative path tried absolute', { pathPattern: '/work/ws/src/**' }, write('src/a.ts', '/work/ws'), true],
    [
      'path falls back to args.path',
      { pathPattern: 'src' },
      { toolName: 'ls', args: { path: 'src' }, sessionId: 's1' },
      true,
    ],
    ['path without a path', { pathPattern: '**' }, bash('ls'), false],
    ['session id', { sessionId: 's2' }, bash('ls', 's2'), true],
    ['other session id', { sessionId: 's2' }, bash('ls', 's1'), false],
    ['all fields must match', { tool: 'bash', commandPattern: 'git *', sessionId: 's1' }, bash('ls'), false],
    ['all fields match', { tool: 'bash', commandPattern: 'git *', sessionId: 's1' }, bash('git push'), true],
  ])('%s', (_name, matcher, target, expected) => {
    expect(hookMatches(matcher, target)).toBe(expected);
  });

  it('wildcards are literal except * and ?', () => {
    expect(wildcardMatches('a.b', 'axb')).toBe(false);
    expect(wildcardMatches('a.b', 'a.b')).toBe(true);
    expect(wildcardMatches('[x]', '[x]')).toBe(true);
    expect(wildcardMatches('BASH', 'bash')).toBe(false);
    expect(wildcardMatches('BASH', 'bash', true)).toBe(true);
    expect(wildcardMatches('a*', 'a\nb')).toBe(true);
  });

  it('tries every spelling of a path', () => {
    expect(pathCandidates('./src/../lib/a.ts', '/ws')).toEqual(['./src/../lib/a.ts', 'lib/a.ts', '/ws/lib/a.ts']);
    expect(pathCandidates('/elsewhere/a', '/ws')).toEqual(['/elsewhere/a']);
  });
});

import { isAbsolute, posix, relative, resolve } from 'node:path';
import type { HookMatcher } from '../../../protocol/hooks.js';
import { BoundedCache } from '../bounded-cache.js';
import { globMatches, RULE_CACHE_ENTRIES } from '../permission-policy.js';

/** What a matcher is tested against: the tool, its (current, possibly hook-modified) arguments and the session. */
export interface HookTarget {
  toolName?: string;
  args?: unknown;
  sessionId: string;
  /** The skill the event is about (skill_load, skill_unload); a `Skill` tool call's is its `skill_name` argument. */
  skill?: string;
  /** The session's workspace: absolute paths inside it are also tried relative to it. */
  workspace?: string;
}

const wildcardCache = new BoundedCache<string, RegExp>(RULE_CACHE_ENTRIES);

/** Anchored wildcard test: `*` matches any run of characters (`/` included), `?` one character, the rest is literal. */
export function wildcardMatches(pattern: string, value: string, ignoreCase = false): boolean {
  const key = `${ignoreCase ? 'i' : 's'}:${pattern}`;
  const re = wildcardCache.getOrCompute(key, () => {
    const source = [...pattern]
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
      .join('');
    return new RegExp(`^${source}$`, ignoreCase ? 'is' : 's');
  });
  return re.test(value);
}

function stringArg(args: unknown, key: string): string | undefined {
  if (args === null || typeof args !== 'object') return undefined;
  const value = (args as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The forms of a path argument a pattern is tried against: as given, normalised (`./` and `..` resolved),
 * and, with a workspace, absolute and workspace-relative. A pattern matches when any form does, so a
 * spelling of the path cannot slip past a hook.
 */
export function pathCandidates(path: string, workspace?: string): string[] {
  const candidates = new Set([path]);
  const normal = posix.normalize(path);
  candidates.add(normal);
  if (workspace) {
    const absolute = isAbsolute(normal) ? normal : resolve(workspace, normal);
    candidates.add(absolute);
    const inside = relative(workspace, absolute);
    if (inside !== '' && !inside.startsWith('..') && !isAbsolute(inside)) candidates.add(inside);
  }
  return [...candidates];
}

/** True when every field the matcher sets matches the target (no matcher matches everything). */
export function hookMatches(matcher: HookMatcher | undefined, target: HookTarget): boolean {
  if (!matcher) return true;
  if (matcher.sessionId !== undefined && matcher.sessionId !== target.sessionId) return false;
  if (
    matcher.tool !== undefined &&
    (target.toolName === undefined || !wildcardMatches(matcher.tool, target.toolName, true))
  )
    return false;
  if (matcher.pathPattern !== undefined) {
    const path = stringArg(target.args, 'file_path') ?? stringArg(target.args, 'path');
    if (path === undefined) return false;
    const pattern = matcher.pathPattern;
    if (!pathCandidates(path, target.workspace).some((candidate) => globMatches(pattern, candidate))) return false;
  }
  if (matcher.commandPattern !== undefined) {
    const command = stringArg(target.args, 'command');
    if (command === undefined || !wildcardMatches(matcher.commandPattern, command)) return false;
  }
  if (matcher.skill !== undefined) {
    const skill = target.skill ?? (target.toolName === 'Skill' ? stringArg(target.args, 'skill_name') : undefined);
    if (skill === undefined || !wildcardMatches(matcher.skill, skill, true)) return false;
  }
  return true;
}

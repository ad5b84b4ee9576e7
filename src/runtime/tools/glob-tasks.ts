import path from 'node:path';
import picomatch from 'picomatch';
import { expandBraces } from './expand-braces.js';
import { assertConfinedGlob } from './workspace-path.js';

// The matcher options fast-glob gives micromatch (dot files, braces, extglobs, globstars; POSIX classes).
const MATCH_OPTIONS = { dot: true, posix: true, strictSlashes: false, windows: false } as const;

// fast-glob's test of a dynamic (non-literal) pattern.
const COMMON_GLOB_SYMBOLS = /[*?]|^!/;
const CHARACTER_CLASS = /\[[^[]*]/;
const REGEX_GROUP = /(?:^|[^!*+?@])\([^(]*\|[^|]*\)/;
const GLOB_EXTENSION = /[!*+?@]\([^(]*\)/;
const BRACE_SEPARATORS = /,|\.\./;
const DOUBLE_SLASH = /(?!^)\/{2,}/g;

function hasBraceExpansion(pattern: string): boolean {
  const open = pattern.indexOf('{');
  if (open === -1) return false;
  const close = pattern.indexOf('}', open + 1);
  return close !== -1 && BRACE_SEPARATORS.test(pattern.slice(open, close));
}

/** True when the pattern (or one segment of it) is not a literal path. */
export function isDynamicPattern(pattern: string): boolean {
  if (pattern === '') return false;
  if (pattern.includes('\\')) return true;
  return (
    COMMON_GLOB_SYMBOLS.test(pattern) ||
    CHARACTER_CLASS.test(pattern) ||
    REGEX_GROUP.test(pattern) ||
    GLOB_EXTENSION.test(pattern) ||
    hasBraceExpansion(pattern)
  );
}

function isNegative(pattern: string): boolean {
  return pattern.startsWith('!') && pattern[1] !== '(';
}

/** `./a/b` is `a/b` (fast-glob compares entries without the leading `./`). */
export function withoutLeadingDot(entry: string): string {
  return entry.startsWith('./') ? entry.slice(2) : entry;
}

function makeRe(pattern: string): RegExp {
  return picomatch.makeRe(pattern, MATCH_OPTIONS);
}

interface Segment {
  readonly literal: string | null;
  readonly re: RegExp | null;
}

/** One positive pattern as the directory pruning sees it (fast-glob's partial matcher). */
interface PartialPattern {
  readonly segments: readonly Segment[];
  /** Segments before the first globstar segment. */
  readonly firstSection: number;
  /** No globstar segment: the pattern has a fixed depth. */
  readonly complete: boolean;
}

function partialPattern(pattern: string): PartialPattern {
  let parts = picomatch.scan(pattern, { parts: true }).parts ?? [];
  if (parts.length === 0) parts = [pattern];
  // A trailing slash does not make a segment (as with the picomatch fast-glob uses).
  if (parts.length > 1 && parts[parts.length - 1] === '') parts = parts.slice(0, -1);
  const segments = parts.map((part): Segment =>
    isDynamicPattern(part) ? { literal: null, re: makeRe(part) } : { literal: part, re: null },
  );
  const globstar = parts.findIndex((part) => isDynamicPattern(part) && part.includes('**'));
  const sections = parts.filter((part) => isDynamicPattern(part) && part.includes('**')).length + 1;
  return { segments, firstSection: globstar === -1 ? parts.length : globstar, complete: sections <= 1 };
}

/** Patterns walked from one base directory (relative to the search path; `.` for the search path itself). */
export interface GlobTask {
  readonly base: string;
  /** Literal paths (stat'ed, not walked) or patterns (walked from the base). */
  readonly dynamic: boolean;
  readonly patterns: readonly string[];
  /** Whether a file (its path relative to the search path, `/`-separated) is a result. */
  matches(entry: string): boolean;
  /** Whether a directory can hold results: fast-glob's deep filter (pattern prefixes and ignored directories). */
  descend(entry: string): boolean;
}

/** How the patterns are read: the ignore patterns, and basename matching for patterns without a slash. */
export interface GlobOptions {
  readonly ignore: readonly string[];
  readonly baseNameMatch: boolean;
}

function processPatterns(input: readonly string[], baseNameMatch: boolean): string[] {
  const expanded = input.flatMap(expandBraces);
  const based = baseNameMatch
    ? expanded.map((pattern) => (pattern.includes('/') ? pattern : `**/${pattern}`))
    : expanded;
  return based.map((pattern) => pattern.replace(DOUBLE_SLASH, '/'));
}

/** glob-parent's base: the literal leading directories of a pattern, normalized (`.` when none). */
function baseDirectory(pattern: string): string {
  const state = picomatch.scan(pattern);
  // Like glob-parent, at least the last segment is not part of the base (`a/\[x\].ts` walks `a`).
  const literal = state.isGlob ? state.base : path.posix.dirname(pattern);
  const base = literal.replace(/\\([!*?|[\](){}])/g, '$1');
  const normalized = path.posix.normalize(base === '' ? '.' : base).replace(/\/+$/, '');
  return normalized === '' ? '.' : normalized;
}

function groupByBase(patterns: readonly string[], dynamic: boolean): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const pattern of patterns) {
    const base = dynamic ? baseDirectory(pattern) : path.posix.dirname(pattern);
    groups.set(base, [...(groups.get(base) ?? []), pattern]);
  }
  // One pattern at the search path itself: a single walk from there covers every other base (as fast-glob does).
  if (groups.has('.')) return new Map([['.', [...patterns]]]);
  return groups;
}

/**
 * fast-glob's reading of `pattern` (dot files matched, braces expanded first, `!` patterns and `ignore`
 * excluded, with `baseNameMatch` a slash-less pattern matches at any depth) as tasks: literal paths to stat
 * and patterns to walk, grouped by their literal base directory. Throws WorkspaceEscapeError for a pattern
 * (or a brace alternative) that is absolute or has a `..` segment.
 */
export function globTasks(pattern: string, options: GlobOptions): GlobTask[] {
  const patterns = processPatterns([pattern], options.baseNameMatch);
  for (const expanded of patterns) assertConfinedGlob(isNegative(expanded) ? expanded.slice(1) : expanded);
  const ignore = processPatterns(options.ignore, options.baseNameMatch);
  const positive = patterns.filter((item) => !isNegative(item));
  const negative = [...patterns.filter(isNegative).map((item) => item.slice(1)), ...ignore];
  const negativeRes = negative.map(makeRe);
  // Only ignore patterns that end in `/**` or in a literal name stop the walk at a directory.
  const pruneRes = negative
    .filter((item) => item.endsWith('/**') || !isDynamicPattern(path.posix.basename(item)))
    .map(makeRe);
  const tasks: GlobTask[] = [];
  for (const dynamic of [false, true]) {
    const own = positive.filter((item) => isDynamicPattern(item) === dynamic);
    for (const [base, group] of groupByBase(own, dynamic)) {
      const positiveRes = group.map(makeRe);
      const partials = group.map(partialPattern);
      tasks.push({
        base,
        dynamic,
        patterns: group,
        matches: (entry) => positiveRes.some((re) => re.test(entry)) && !negativeRes.some((re) => re.test(entry)),
        descend: (entry) =>
          (options.baseNameMatch || partialMatch(partials, entry)) && !pruneRes.some((re) => re.test(entry)),
      });
    }
  }
  return tasks;
}

/** Whether a directory at `entry` can lead to a match of one of the patterns (fast-glob's PartialMatcher). */
function partialMatch(patterns: readonly PartialPattern[], entry: string): boolean {
  const parts = entry.split('/');
  for (const pattern of patterns) {
    if (pattern.complete && pattern.segments.length <= parts.length) continue;
    if (!pattern.complete && parts.length > pattern.firstSection) return true;
    const matched = parts.every((part, index) => {
      const segment = pattern.segments[index];
      return segment.re ? segment.re.test(part) : segment.literal === part;
    });
    if (matched) return true;
  }
  return false;
}

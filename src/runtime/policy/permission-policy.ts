import type { PermissionPolicy } from '../../protocol/governance.js';
import { BoundedCache } from './bounded-cache.js';
import { argumentString, CallSubjects, type PathSubject } from './permission-subjects.js';
import { analyzeShellCommand } from './shell/analyze-shell-command.js';

/** A permission decision. */
export type PermissionDecision = 'allow' | 'ask' | 'deny';

/** One parsed rule: a tool name (or `mcp__server` prefix) and an optional argument pattern. */
export interface PermissionRule {
  readonly source: string;
  readonly tool: string;
  readonly pattern: string | undefined;
}

/** The outcome of evaluating a call against a policy: the decision and the rule that made it. */
export interface PermissionVerdict {
  decision: PermissionDecision;
  /** The rule text that decided, or `defaultDecision` / `disabled`. */
  rule: string;
}

const RULE = /^([A-Za-z0-9_.-]+)(?:\((.*)\))?$/s;

// Parsed rules by their text: a policy's rules are parsed for every session and every governed call, and the
// same few dozen rule texts recur. Bounded (least recently used out): a flood of distinct rules cannot grow it.
/** How many parsed rules, and how many compiled patterns, are cached (each). */
export const RULE_CACHE_ENTRIES = 1000;
const parsedRules = new BoundedCache<string, PermissionRule>(RULE_CACHE_ENTRIES);

/** Parse `Tool` or `Tool(pattern)`; throws with the rule text when malformed. */
export function parseRule(source: string): PermissionRule {
  return parsedRules.getOrCompute(source, () => {
    const match = RULE.exec(source.trim());
    if (!match) throw new Error(`invalid permission rule "${source}": expected Tool or Tool(pattern)`);
    return Object.freeze({ source, tool: match[1].toLowerCase(), pattern: match[2] });
  });
}

/** The seed's argument string of a call (SEED-REFERENCE §3.2); rules also see the paths tools declare (CallSubjects). */
export { argumentString };

const globCache = new BoundedCache<string, RegExp>(RULE_CACHE_ENTRIES);

/** The cached compiled patterns, for the test that they stay bounded. */
export function ruleGlobCacheSize(): number {
  return globCache.size;
}

function compileGlob(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        i += 1;
        // `**/` also matches zero directories.
        if (pattern[i + 1] === '/') {
          i += 1;
          source += '(?:.*/)?';
        } else source += '.*';
      } else source += '[^/]*';
    } else if (c === '?') source += '[^/]';
    else source += c.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}

/**
 * The one matcher of rule patterns (permission rules, hook path patterns). Anchored glob: `*` matches within
 * one path segment, `**` crosses `/`, `?` is one character (not `/`), a leading dot is an ordinary character
 * (so `secrets/**` covers `secrets/.key`), everything else (braces, brackets, parentheses) is literal, and
 * case counts. A pattern ending in `:*` is a prefix test on what precedes it; the bare pattern `*` matches
 * every argument (so `read(*)` means every read). The table in test/policy/rule-semantics.test.ts freezes it.
 */
export function globMatches(pattern: string, value: string): boolean {
  if (pattern === '*' || pattern === '**') return true;
  if (pattern.endsWith(':*')) return value.startsWith(pattern.slice(0, -2));
  return globCache.getOrCompute(pattern, compileGlob).test(value);
}

/** True when a rule's tool part names this tool (case-insensitive; `mcp__server` covers that server's tools). */
export function ruleCoversTool(rule: PermissionRule, toolName: string): boolean {
  const name = toolName.toLowerCase();
  if (rule.tool === name) return true;
  return rule.tool.startsWith('mcp__') && !rule.tool.slice(5).includes('__') && name.startsWith(`${rule.tool}__`);
}

/** True when a pattern could match a path strictly below `dir` (a search based at `dir` would reach it). */
export function reachesBelow(pattern: string, dir: string): boolean {
  if (pattern.startsWith('/') !== dir.startsWith('/')) return false;
  if (pattern.endsWith(':*')) {
    const prefix = pattern.slice(0, -2);
    const base = dir === '.' ? '' : `${dir.replace(/\/$/, '')}/`;
    return prefix.startsWith(base) || base.startsWith(prefix);
  }
  const dirParts = dir === '.' ? [] : dir.split('/').filter((part) => part !== '');
  const patternParts = pattern.split('/');
  if (pattern.startsWith('/')) patternParts.shift();
  for (let i = 0; i < dirParts.length; i++) {
    const segment = patternParts[i];
    if (segment === undefined) return false;
    if (segment.includes('**')) return true;
    if (!globMatches(segment, dirParts[i])) return false;
  }
  return patternParts.length > dirParts.length;
}

/** A pattern as matched against path forms: a leading `./` says nothing (the forms are normalized). */
function asPathPattern(pattern: string): string {
  let stripped = pattern;
  while (stripped.startsWith('./') && stripped.length > 2) stripped = stripped.slice(2);
  return stripped;
}

function pathRestricted(rulePattern: string, subject: PathSubject): boolean {
  const pattern = asPathPattern(rulePattern);
  if (subject.spellings.some((form) => globMatches(pattern, form))) return true;
  return subject.tree && subject.allowGroups.some((group) => group.some((form) => reachesBelow(pattern, form)));
}

/**
 * A deny or ask rule's hold on a call: it covers the tool, and its pattern (if any) matches the seed's
 * argument string, or any spelling of a path the tool declares, or (for a search base) a path below it.
 */
function restricts(rule: PermissionRule, toolName: string, subjects: CallSubjects): boolean {
  if (!ruleCoversTool(rule, toolName)) return false;
  if (coversAnyArgs(rule)) return true;
  const pattern = rule.pattern as string;
  if (globMatches(pattern, subjects.argument)) return true;
  // A compact-JSON pattern (the seed's form for most tools) is about the arguments, not a path.
  if (pattern.startsWith('{') || !subjects.hasPaths) return false;
  return subjects.paths.some((subject) => pathRestricted(pattern, subject));
}

/**
 * The allow rules' say on a call: the rule text(s) that allow it, or undefined. A rule covering every
 * argument allows it; a tool without declared paths (or whose seed form is compact JSON, matched by a JSON
 * pattern) is allowed by a rule matching its argument string; otherwise every place of every declared path
 * must be matched by an allow rule in its canonical forms (so one path not allowed leaves the call unallowed).
 */
function allowedBy(sources: readonly string[], toolName: string, subjects: CallSubjects): string | undefined {
  const covering: PermissionRule[] = [];
  for (const source of sources) {
    const rule = parseRule(source);
    if (!ruleCoversTool(rule, toolName)) continue;
    if (coversAnyArgs(rule)) return source;
    covering.push(rule);
  }
  if (covering.length === 0) return undefined;
  if (!subjects.hasPaths || subjects.json) {
    const hit = covering.find((rule) => globMatches(rule.pattern as string, subjects.argument));
    if (hit || !subjects.hasPaths) return hit?.source;
  }
  const used: string[] = [];
  for (const subject of subjects.paths) {
    for (const group of subject.allowGroups) {
      const rule = covering.find((candidate) => {
        const pattern = asPathPattern(candidate.pattern as string);
        return group.some((form) => globMatches(pattern, form));
      });
      if (!rule) return undefined;
      if (!used.includes(rule.source)) used.push(rule.source);
    }
  }
  return used.join(', ');
}

/** Where a call runs, for rules whose outcome depends on it (a bash redirect target inside or outside the workspace). */
export interface PermissionContext {
  /** The session's workspace (the directory bash runs in); without it every absolute redirect target counts as outside. */
  readonly workspace?: string;
  /**
   * The call's permission subjects (the argument string and the paths its tool declares), computed once per
   * call by the permission stage; without them the rules see the seed's argument string only.
   */
  readonly subjects?: CallSubjects;
}

/** True when a rule covers every argument of its tool (bare `Tool`, `Tool(*)`, `Tool(**)`). */
function coversAnyArgs(rule: PermissionRule): boolean {
  return rule.pattern === undefined || rule.pattern === '*' || rule.pattern === '**';
}

/**
 * Bash: the rules see each simple command of the line (analyzeShellCommand). A deny rule matching the line or
 * any simple command denies; pattern allow rules allow only when every simple command matches one and the line
 * has no hazard (substitution, eval/source/exec, a shell running a string, a redirect outside the workspace, an
 * unparseable line); a hazard makes an otherwise allowed call `ask`. Rules that cover every argument (`bash`,
 * `bash(*)`) do not look at the command and keep their meaning.
 */
function evaluateBash(policy: PermissionPolicy, command: string, context: PermissionContext): PermissionVerdict {
  const analysis = analyzeShellCommand(command, context.workspace);
  const subjects = [command, ...analysis.commands.map((c) => c.subject)];
  const rulesOf = (list: readonly string[]) => list.map(parseRule).filter((rule) => ruleCoversTool(rule, 'bash'));
  const hits = (rule: PermissionRule, values: readonly string[]) =>
    coversAnyArgs(rule) || values.some((value) => globMatches(rule.pattern as string, value));
  for (const rule of rulesOf(policy.deny)) if (hits(rule, subjects)) return { decision: 'deny', rule: rule.source };
  const allow = rulesOf(policy.allow);
  const wildcard = allow.find(coversAnyArgs);
  if (wildcard) return { decision: 'allow', rule: wildcard.source };
  const hazard = analysis.parsed ? analysis.hazards.join('; ') : 'the command line could not be parsed';
  // With no simple command (empty, or only comments) nothing runs: the rules see the line as it is.
  const pieces = analysis.commands.length > 0 ? analysis.commands.map((c) => c.subject) : [command];
  const used: string[] = [];
  const allAllowed = pieces.every((piece) => {
    const rule = allow.find((candidate) => globMatches(candidate.pattern as string, piece));
    if (rule && !used.includes(rule.source)) used.push(rule.source);
    return rule !== undefined;
  });
  if (allAllowed && hazard === '') return { decision: 'allow', rule: used.join(', ') };
  for (const rule of rulesOf(policy.ask)) if (hits(rule, subjects)) return { decision: 'ask', rule: rule.source };
  if (allAllowed) return { decision: 'ask', rule: `${used.join(', ')} (not auto-allowed: ${hazard})` };
  if (policy.defaultDecision === 'allow' && hazard !== '')
    return { decision: 'ask', rule: `defaultDecision (not auto-allowed: ${hazard})` };
  return { decision: policy.defaultDecision, rule: 'defaultDecision' };
}

/**
 * Evaluate one call: disabled -> allow; then deny, allow, ask rules in that order; then the default. Pure.
 * For bash the rules see each simple command of the line (see evaluateBash); `context` gives the workspace.
 */
export function evaluatePermission(
  policy: PermissionPolicy,
  toolName: string,
  args: unknown,
  context: PermissionContext = {},
): PermissionVerdict {
  if (!policy.enabled) return { decision: 'allow', rule: 'disabled' };
  if (toolName.toLowerCase() === 'bash') return evaluateBash(policy, argumentString(toolName, args), context);
  const subjects = context.subjects ?? new CallSubjects(toolName, args, undefined, context.workspace);
  for (const source of policy.deny)
    if (restricts(parseRule(source), toolName, subjects)) return { decision: 'deny', rule: source };
  if (policy.allow.length > 0) {
    const rule = allowedBy(policy.allow, toolName, subjects);
    if (rule !== undefined) return { decision: 'allow', rule };
  }
  for (const source of policy.ask)
    if (restricts(parseRule(source), toolName, subjects)) return { decision: 'ask', rule: source };
  return { decision: policy.defaultDecision, rule: 'defaultDecision' };
}

const STRICTNESS: Readonly<Record<PermissionDecision, number>> = { allow: 0, ask: 1, deny: 2 };

/** Prefix of a verdict's rule when the operator's policy (the floor) decided, not the session's own. */
export const OPERATOR_RULE_PREFIX = 'operator policy: ';

/**
 * Evaluate a call against the session's policy bounded by the operator's `floor` (when the session's
 * creator could not weaken the operator's policy): the stricter verdict wins (deny > ask > allow), so a
 * bounded session can only tighten the operator's policy; the session's agent's permissions (`agent`) bound
 * it the same way. Without a floor or an agent this is evaluatePermission.
 */
export function evaluateBoundedPermission(
  policy: PermissionPolicy,
  floor: PermissionPolicy | undefined,
  toolName: string,
  args: unknown,
  context: PermissionContext = {},
  agents: readonly PermissionPolicy[] = [],
): PermissionVerdict {
  const own = evaluatePermission(policy, toolName, args, context);
  if (own.decision === 'deny') return own;
  let bounded =
    floor === undefined ? own : stricter(own, evaluatePermission(floor, toolName, args, context), OPERATOR_RULE_PREFIX);
  for (const agent of agents) {
    if (bounded.decision === 'deny') break;
    bounded = stricter(bounded, evaluatePermission(agent, toolName, args, context), AGENT_RULE_PREFIX);
  }
  return bounded;
}

/** Prefix of a verdict's rule when the session's agent's own permissions (a session for an agent) decided. */
export const AGENT_RULE_PREFIX = 'agent policy: ';

function stricter(own: PermissionVerdict, bound: PermissionVerdict, prefix: string): PermissionVerdict {
  return STRICTNESS[bound.decision] > STRICTNESS[own.decision]
    ? { decision: bound.decision, rule: `${prefix}${bound.rule}` }
    : own;
}

/** True when the session's policy, the operator's floor or one of the agent bounds deny the tool for every argument. */
export function isToolFullyDeniedBounded(
  policy: PermissionPolicy,
  floor: PermissionPolicy | undefined,
  toolName: string,
  agents: readonly PermissionPolicy[] = [],
): boolean {
  return (
    isToolFullyDenied(policy, toolName) ||
    (floor !== undefined && isToolFullyDenied(floor, toolName)) ||
    agents.some((agent) => isToolFullyDenied(agent, toolName))
  );
}

/** True when a deny rule covers the tool for every argument (such tools are hidden from the model). */
export function isToolFullyDenied(policy: PermissionPolicy, toolName: string): boolean {
  if (!policy.enabled) return false;
  return policy.deny.some((source) => {
    const rule = parseRule(source);
    return ruleCoversTool(rule, toolName) && coversAnyArgs(rule);
  });
}

/** One malformed rule of a policy: its list, its index there and why the parser refused it. */
export interface RuleProblem {
  readonly field: 'deny' | 'ask' | 'allow';
  readonly index: number;
  readonly message: string;
}

/** Every malformed rule in a policy's lists (the sessions' check and the config's startup check share it). */
export function ruleProblems(policy: Pick<PermissionPolicy, 'deny' | 'ask' | 'allow'>): RuleProblem[] {
  const problems: RuleProblem[] = [];
  for (const field of ['deny', 'ask', 'allow'] as const) {
    policy[field].forEach((source, index) => {
      try {
        parseRule(source);
      } catch (error) {
        problems.push({ field, index, message: error instanceof Error ? error.message : String(error) });
      }
    });
  }
  return problems;
}

/** Every malformed rule in a policy, as `field[index]: message` (for SESSION_CONFIGURATION_ERROR). */
export function policyProblems(policy: PermissionPolicy): string[] {
  return ruleProblems(policy).map(({ field, index, message }) => `${field}[${index}]: ${message}`);
}

/** The server's built-in default: read-only tools (and ask_user, which only asks) allowed, everything else asks. */
export const BUILTIN_DEFAULT_POLICY: PermissionPolicy = {
  deny: [],
  ask: [],
  allow: [
    'read',
    'grep',
    'glob',
    'ls',
    'search_skills',
    'ask_user',
    // The read-only git calls (isGitReadOnly; the git schema orders its keys so these prefixes decide it).
    'git({"command":"status"**)',
    'git({"command":"log"**)',
    'git({"command":"diff"**)',
    'git({"command":"remote"**)',
    'git({"command":"branch"})',
    'git({"command":"branch","limit":**)',
    'git({"command":"branch","cursor":**)',
    'git({"command":"stash"})',
    'git({"command":"stash","include_untracked":false**)',
    'git({"command":"stash","limit":**)',
    'git({"command":"stash","cursor":**)',
    'git({"command":"worktree"})',
    'git({"command":"worktree","subcommand":"list"**)',
    'git({"command":"worktree","limit":**)',
    'git({"command":"worktree","cursor":**)',
  ],
  defaultDecision: 'ask',
  enabled: true,
};

import type { PermissionPolicy } from '../../protocol/governance.js';
import { BoundedCache } from './bounded-cache.js';
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

/**
 * The string a rule's pattern is matched against (the seed's table): bash -> command, read/write/edit ->
 * file_path, ls -> path, every other tool (patch, grep, glob, git, batch, MCP...) -> compact JSON of its args.
 */
export function argumentString(toolName: string, args: unknown): string {
  const record = args !== null && typeof args === 'object' ? (args as Record<string, unknown>) : {};
  const pick = (key: string) => (typeof record[key] === 'string' ? (record[key] as string) : '');
  switch (toolName.toLowerCase()) {
    case 'bash':
      return pick('command');
    case 'read':
    case 'write':
    case 'edit':
      return pick('file_path');
    case 'ls':
      return pick('path');
    default:
      return JSON.stringify(args ?? {});
  }
}

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

function matches(rule: PermissionRule, toolName: string, args: unknown): boolean {
  if (!ruleCoversTool(rule, toolName)) return false;
  return rule.pattern === undefined || globMatches(rule.pattern, argumentString(toolName, args));
}

/** Where a call runs, for rules whose outcome depends on it (a bash redirect target inside or outside the workspace). */
export interface PermissionContext {
  /** The session's workspace (the directory bash runs in); without it every absolute redirect target counts as outside. */
  readonly workspace?: string;
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
  for (const [list, decision] of [
    [policy.deny, 'deny'],
    [policy.allow, 'allow'],
    [policy.ask, 'ask'],
  ] as const) {
    for (const source of list) if (matches(parseRule(source), toolName, args)) return { decision, rule: source };
  }
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

/** The server's built-in default: read-only tools allowed, everything else asks. */
export const BUILTIN_DEFAULT_POLICY: PermissionPolicy = {
  deny: [],
  ask: [],
  allow: [
    'read',
    'grep',
    'glob',
    'ls',
    'search_skills',
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

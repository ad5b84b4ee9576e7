import { CodeError } from '../../errors.js';
import type { PermissionPolicy } from '../../protocol/governance.js';
import type { ConfirmationInheritance } from '../../protocol/subagent-task.js';
import type { BudgetDecision, BudgetGuard } from '../policy/budget/budget-decision.js';
import { parseRule, ruleCoversTool } from '../policy/permission-policy.js';
import type { SessionBudgetGuard, SessionGovernanceParts } from '../session-kernel/session-governance-factory.js';
import type { SkillDefinition } from '../skills/skill-definition.js';

/**
 * A child's view of its parent's budget guard: every check and every token is the parent's, so parent and
 * children spend one budget. The run clock stays the parent's (a child's run starting or ending leaves it alone).
 */
export class ChildBudgetGuard implements SessionBudgetGuard {
  constructor(private readonly parent: BudgetGuard) {}

  beforeLlmCall(estimatedTokens: number, signal?: AbortSignal): Promise<BudgetDecision> {
    return this.parent.beforeLlmCall(estimatedTokens, signal);
  }

  recordUsage(totalTokens: number): void {
    this.parent.recordUsage(totalTokens);
  }

  beforeToolCall(toolName: string, signal?: AbortSignal): Promise<BudgetDecision> {
    return this.parent.beforeToolCall(toolName, signal);
  }

  releaseToolCall(): void {
    this.parent.releaseToolCall?.();
  }

  setHost(): void {
    throw new CodeError(
      'CHILD_SESSION',
      "a child session spends its parent's budget: set the budget host on the parent session",
    );
  }
}

/** The active-skill restriction of a `Skill` child: a tool no allowed-tools rule names may not run (the seed's message). */
function skillRestriction(skill: SkillDefinition): (toolName: string) => string | undefined {
  const rules = skill.allowedTools.map(parseRule);
  return (toolName) =>
    rules.some((rule) => ruleCoversTool(rule, toolName))
      ? undefined
      : `Tool '${toolName}' is not allowed by any active skill.`;
}

/**
 * A child session's governance, derived from its parent's: the same policy, floor, hooks, redactor and
 * budget; the child's agent bounds; and per `inheritance` the parent's confirmation broker (a child's ask is
 * answered on the parent's confirmations route), a denial, or an approval without asking.
 */
export function childGovernance(
  parent: SessionGovernanceParts,
  bounds: readonly PermissionPolicy[],
  inheritance: ConfirmationInheritance,
  skill?: SkillDefinition,
): SessionGovernanceParts {
  const budget = new ChildBudgetGuard(parent.budget);
  // A delegated run has no user of its own to ask: ask_user answers so (the parent's questions stay the parent's).
  const { restrictTool: _parentRestriction, questions: _parentQuestions, ...inherited } = parent.governance;
  // inherit_parent answers the way the parent does (a parent that denies or approves asks keeps doing so).
  const onAsk =
    inheritance === 'deny_on_ask' ? 'deny' : inheritance === 'auto_approve' ? 'approve' : parent.governance.onAsk;
  const parentRestriction = parent.governance.restrictTool;
  const own = skill ? skillRestriction(skill) : undefined;
  const restrictTool =
    own && parentRestriction
      ? (name: string, origin?: string) => parentRestriction(name, origin) ?? own(name)
      : (own ?? parentRestriction);
  return {
    governance: {
      ...inherited,
      agentPermissions: bounds,
      budget,
      ...(onAsk ? { onAsk } : {}),
      ...(restrictTool ? { restrictTool } : {}),
    },
    hooks: parent.hooks,
    budget,
  };
}

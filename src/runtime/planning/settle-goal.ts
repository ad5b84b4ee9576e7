import { readFileSync } from 'node:fs';
import type { AgentGoal } from '../../protocol/planning.js';
import type { Usage } from '../../protocol/run-record.js';
import { type VerificationReport } from '../../protocol/verification.js';
import { buildVerificationSummary, formatVerificationSummary } from '../../protocol/verification-summary.js';
import type { InvocationContext } from '../invocation/invocation-context.js';
import type { LlmInvoker } from '../invocation/llm-invoker.js';
import { AchievementAnswerSchema } from './plan-answers.js';
import { generateStructured } from './structured-output.js';

const GOAL_CHECK_SYSTEM = readFileSync(new URL('./prompts/goal-check.md', import.meta.url), 'utf8').trim();

// Success criteria that can only be shown by running something: tests, builds, linters, type checks.
const VERIFICATION_WORDS =
  /verif|\btests?\b|\btesting\b|\bbuilds?\b|\bcompiles?\b|\blint|type[- ]?check|\bci\b|\bpass(?:es|ing)?\b/i;

/** True when a goal's success criteria name verification: then only a passing verification report achieves it. */
export function goalNeedsVerification(goal: AgentGoal): boolean {
  return goal.success_criteria.some((criterion) => VERIFICATION_WORDS.test(criterion));
}

/** What the goal check needs of the finished run. */
export interface GoalEvidence {
  /** The run's final answer. */
  text: string;
  /** The verification reports recorded in the run. */
  reports: readonly VerificationReport[];
  /** Steps the run had (a plan's, else 1). */
  totalSteps: number;
  /** When execution started (epoch ms): goal_achieved.duration_ms counts from here. */
  startedMs: number;
}

/**
 * After a completed run, judge its goal with a structured call through the run's LLM invoker (the seed's
 * strict evaluator: the answer and the verification evidence only). `goal_achieved` is emitted only when the
 * model says every criterion is met and, for a goal whose criteria name verification, the run holds at least
 * one verification report and all of them passed; otherwise a `run_warning` tells why. Answers the call's usage.
 */
export async function settleGoal(
  llm: LlmInvoker,
  ctx: InvocationContext,
  goal: AgentGoal,
  evidence: GoalEvidence,
): Promise<Usage> {
  const summary = buildVerificationSummary(evidence.reports);
  const summaryText =
    evidence.reports.length > 0
      ? formatVerificationSummary(summary)
      : 'No verification report was recorded in this run.';
  const answer = await generateStructured(llm, ctx, {
    name: 'goal_achievement',
    description: 'Strict, evidence-backed evaluation of whether every goal criterion is met',
    system: GOAL_CHECK_SYSTEM,
    prompt: `Goal: ${goal.description}\nSuccess criteria: ${goal.success_criteria.join('; ') || '(none given)'}\n\nAssistant result:\n${evidence.text}\n\nStructured verification evidence:\n${summaryText}`,
    schema: AchievementAnswerSchema,
  });
  if (!answer.ok) {
    ctx.emit('run_warning', {
      source: 'goal',
      message: `goal check failed: ${answer.error}`,
      fallback: 'not achieved',
    });
    return answer.usage;
  }
  const verified = summary.status === 'passed';
  if (answer.value.achieved && (verified || !goalNeedsVerification(goal))) {
    ctx.emit('goal_achieved', {
      goal: goal.description,
      total_steps: evidence.totalSteps,
      duration_ms: Math.max(0, ctx.hostEnv.now() - evidence.startedMs),
    });
  } else if (answer.value.achieved) {
    ctx.emit('run_warning', {
      source: 'goal',
      message: `goal not achieved: its success criteria name verification and the run has no passing verification report (verification status ${summary.status})`,
    });
  }
  return answer.usage;
}

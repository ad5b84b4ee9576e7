import { readFileSync } from 'node:fs';
import type { AgentGoal, ExecutionPlan } from '../../protocol/planning.js';
import { addUsage, type Usage } from '../../protocol/run-record.js';
import type { InvocationContext } from '../invocation/invocation-context.js';
import type { LlmInvoker } from '../invocation/llm-invoker.js';
import { needsPlanning } from './needs-planning.js';
import { fallbackPlan, goalOf, GoalAnswerOnlySchema, planOf, PreAnalysisAnswerSchema } from './plan-answers.js';
import { generateStructured } from './structured-output.js';

const prompt = (name: string): string => readFileSync(new URL(`./prompts/${name}`, import.meta.url), 'utf8').trim();
const PRE_ANALYSIS_SYSTEM = prompt('pre-analysis.md');
const GOAL_EXTRACT_SYSTEM = prompt('goal-extract.md');

/** What the planning stage of a run needs: the run's LLM invoker, the session's choices and the run's status. */
export interface PlanningDeps {
  readonly llm: LlmInvoker;
  readonly planningMode: 'auto' | 'enabled' | 'disabled';
  readonly goalTracking: boolean;
  /** Moves the run record (`planning` while the plan is made, `executing` after). */
  setStatus(status: 'planning' | 'executing'): void;
}

/** What planning decided: the plan to execute (none: run unplanned), the goal to track, and what its calls used. */
export interface PlanningOutcome {
  plan?: ExecutionPlan;
  goal?: AgentGoal;
  usage: Usage;
}

/**
 * The planning stage of a run (the seed's pre-analysis): one structured call answers whether to plan (`auto`;
 * `enabled` always plans), the goal and the plan; a malformed answer is repaired at most twice, then the run
 * goes on unplanned with a `run_warning` (`auto` falls back to keyword detection and the seed's one-step plan).
 * Without planning, `goalTracking` makes one goal-extraction call. Emits goal_extracted, planning_start and
 * planning_end; refused calls (budget, hooks) and cancellation throw.
 */
export async function planRun(deps: PlanningDeps, ctx: InvocationContext, input: string): Promise<PlanningOutcome> {
  const usage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  const now = ctx.hostEnv.now();
  let plan: ExecutionPlan | undefined;
  let goal: AgentGoal | undefined;
  if (deps.planningMode !== 'disabled') {
    deps.setStatus('planning');
    const answer = await generateStructured(deps.llm, ctx, {
      name: 'pre_analysis',
      description: 'Intent, goal, plan, and optimized input for an agent turn',
      system: PRE_ANALYSIS_SYSTEM,
      prompt: `Analyze this user request.\n\nUser request:\n${input}`,
      schema: PreAnalysisAnswerSchema,
    });
    addUsage(usage, answer.usage);
    if (answer.ok) {
      if (deps.planningMode === 'enabled' || answer.value.requires_planning)
        plan = answer.value.execution_plan.steps.length > 0 ? planOf(answer.value, input) : fallbackPlan(input);
      if (deps.goalTracking) goal = goalOf(answer.value.goal.description, answer.value.goal.success_criteria, now);
    } else {
      const keyword = deps.planningMode === 'auto' && needsPlanning(input);
      if (keyword) plan = fallbackPlan(input);
      ctx.emit('run_warning', {
        source: 'planning',
        message: `planning failed: ${answer.error}`,
        fallback: keyword ? 'single_step_plan' : 'unplanned',
      });
      if (deps.goalTracking) goal = goalOf(input, [], now);
    }
  } else if (deps.goalTracking) {
    const answer = await generateStructured(deps.llm, ctx, {
      name: 'goal',
      description: 'The goal of the task and its success criteria',
      system: GOAL_EXTRACT_SYSTEM,
      prompt: `Extract the goal of this request.\n\nUser request:\n${input}`,
      schema: GoalAnswerOnlySchema,
    });
    addUsage(usage, answer.usage);
    if (answer.ok) goal = goalOf(answer.value.description, answer.value.success_criteria, now);
    else {
      ctx.emit('run_warning', {
        source: 'goal',
        message: `goal extraction failed: ${answer.error}`,
        fallback: 'the request as the goal',
      });
      goal = goalOf(input, [], now);
    }
  }
  // The seed's order: planning_start, goal_extracted, planning_end.
  if (plan) ctx.emit('planning_start', { prompt: input });
  if (goal) ctx.emit('goal_extracted', { goal });
  if (plan) ctx.emit('planning_end', { plan, estimated_steps: plan.estimated_steps });
  deps.setStatus('executing');
  return { ...(plan ? { plan } : {}), ...(goal ? { goal } : {}), usage };
}

import { readFileSync } from 'node:fs';
import type { AgentGoal, ExecutionPlan } from '../../protocol/planning.js';
import { addUsage, type Usage } from '../../protocol/run-record.js';
import type { InvocationContext } from '../invocation/invocation-context.js';
import type { LlmInvoker } from '../invocation/llm-invoker.js';
import type { GovernanceHooks } from '../policy/session-governance.js';
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
  /** The session's hooks: pre_planning (gating), post_planning and intent_detection. */
  readonly hooks?: GovernanceHooks | undefined;
}

/** The planning strategies a pre_planning hook may choose (`selected_strategy`). */
export const PLANNING_STRATEGIES = ['pre_analysis', 'single_step', 'none'] as const;
type PlanningStrategy = (typeof PLANNING_STRATEGIES)[number];

/** What pre_planning hooks decided: the task to plan, the strategy, and guidance for the pre-analysis prompt. */
interface PlanningGate {
  task: string;
  strategy: PlanningStrategy;
  guidance: string;
}

function guidanceOf(modified: Record<string, unknown>): string {
  const parts: string[] = [];
  const hints = modified.hints;
  if (typeof hints === 'string' && hints.trim()) parts.push(`Hints:\n${hints.trim()}`);
  else if (Array.isArray(hints)) {
    const lines = hints.filter((h): h is string => typeof h === 'string' && h.trim() !== '');
    if (lines.length) parts.push(`Hints:\n${lines.map((h) => `- ${h.trim()}`).join('\n')}`);
  }
  if (typeof modified.planning_template === 'string' && modified.planning_template.trim())
    parts.push(`Planning template:\n${modified.planning_template.trim()}`);
  return parts.join('\n\n').slice(0, 20_000);
}

/**
 * Ask pre_planning hooks (gating, fail closed): `block`, `skip` or `retry` leave the run unplanned (with a
 * run_warning); `continue` with `modified` may replace the task (`modified_task`, `task_description` or
 * `prompt`), choose a strategy (`selected_strategy`) and add `hints` or a `planning_template`.
 */
async function prePlanning(deps: PlanningDeps, ctx: InvocationContext, input: string): Promise<PlanningGate> {
  const plain: PlanningGate = { task: input, strategy: 'pre_analysis', guidance: '' };
  const hooks = deps.hooks;
  if (!hooks?.wants('pre_planning')) return plain;
  const outcome = await hooks.gate(
    'pre_planning',
    {
      session_id: ctx.sessionId,
      run_id: ctx.runId,
      task_description: input,
      available_strategies: [...PLANNING_STRATEGIES],
      planning_mode: deps.planningMode,
    },
    { sessionId: ctx.sessionId },
    ctx.signal,
  );
  if (outcome.action !== 'continue') {
    ctx.emit('run_warning', {
      source: 'planning',
      message: `planning ${outcome.action === 'skip' ? 'skipped' : 'blocked'} by pre_planning hook${outcome.hookId ? ` ${outcome.hookId}` : ''}${outcome.reason ? `: ${outcome.reason}` : ''}`,
      fallback: 'unplanned',
    });
    return { ...plain, strategy: 'none' };
  }
  const modified = outcome.modifiedPayload;
  if (!modified) return plain;
  const replaced = [modified.modified_task, modified.task_description, modified.prompt].find(
    (value): value is string => typeof value === 'string' && value.trim() !== '' && value !== input,
  );
  const chosen = modified.selected_strategy;
  return {
    task: replaced ?? input,
    strategy: (PLANNING_STRATEGIES as readonly unknown[]).includes(chosen)
      ? (chosen as PlanningStrategy)
      : 'pre_analysis',
    guidance: guidanceOf(modified),
  };
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
    const gate = await prePlanning(deps, ctx, input);
    const task = gate.task;
    let failure: string | undefined;
    if (gate.strategy === 'pre_analysis') {
      const answer = await generateStructured(deps.llm, ctx, {
        name: 'pre_analysis',
        description: 'Intent, goal, plan, and optimized input for an agent turn',
        system: PRE_ANALYSIS_SYSTEM,
        prompt: `Analyze this user request.\n\nUser request:\n${task}${gate.guidance ? `\n\n${gate.guidance}` : ''}`,
        schema: PreAnalysisAnswerSchema,
      });
      addUsage(usage, answer.usage);
      if (answer.ok) {
        if (deps.planningMode === 'auto')
          intentDetected(deps, ctx, task, answer.value.requires_planning, 'pre_analysis', answer.value.intent);
        if (deps.planningMode === 'enabled' || answer.value.requires_planning)
          plan = answer.value.execution_plan.steps.length > 0 ? planOf(answer.value, task) : fallbackPlan(task);
        if (deps.goalTracking) goal = goalOf(answer.value.goal.description, answer.value.goal.success_criteria, now);
      } else {
        failure = answer.error;
        const keyword = deps.planningMode === 'auto' && needsPlanning(task);
        if (deps.planningMode === 'auto') intentDetected(deps, ctx, task, keyword, 'keywords');
        if (keyword) plan = fallbackPlan(task);
        ctx.emit('run_warning', {
          source: 'planning',
          message: `planning failed: ${answer.error}`,
          fallback: keyword ? 'single_step_plan' : 'unplanned',
        });
        if (deps.goalTracking) goal = goalOf(task, [], now);
      }
    } else {
      if (gate.strategy === 'single_step') plan = fallbackPlan(task);
      if (deps.goalTracking) goal = goalOf(task, [], now);
    }
    if (deps.hooks?.wants('post_planning'))
      deps.hooks.observe(
        'post_planning',
        {
          session_id: ctx.sessionId,
          run_id: ctx.runId,
          task_description: task,
          strategy_used: plan ? gate.strategy : 'none',
          subtasks: plan ? plan.steps.map((step) => step.content) : [],
          success: failure === undefined,
          ...(failure !== undefined ? { error: failure } : {}),
        },
        { sessionId: ctx.sessionId },
      );
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

/** Tell intent_detection hooks what `planningMode: "auto"` decided, and from what (pre-analysis, or the keyword fallback). */
function intentDetected(
  deps: PlanningDeps,
  ctx: InvocationContext,
  prompt: string,
  requiresPlanning: boolean,
  source: 'pre_analysis' | 'keywords',
  intent?: string,
): void {
  if (!deps.hooks?.wants('intent_detection')) return;
  deps.hooks.observe(
    'intent_detection',
    {
      session_id: ctx.sessionId,
      run_id: ctx.runId,
      prompt,
      requires_planning: requiresPlanning,
      source,
      ...(intent !== undefined ? { intent } : {}),
    },
    { sessionId: ctx.sessionId },
  );
}

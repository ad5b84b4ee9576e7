import { readFileSync } from 'node:fs';
import type { ChatMessage } from '../../protocol/chat-message.js';
import type { ExecutionPlan, PlanProgress, PlanTask, TaskStatus } from '../../protocol/planning.js';
import type { InvocationContext } from '../invocation/invocation-context.js';
import { runLoopWithin, type LoopDeps, type LoopOutcome, type LoopState } from '../loop/run-loop.js';

const STEP_PROMPT = readFileSync(new URL('./prompts/plan-step.md', import.meta.url), 'utf8').trim();

/** The model-facing instruction of one plan step, appended to the transcript as a user message. */
export function stepPrompt(plan: ExecutionPlan, step: PlanTask, stepNumber: number): string {
  return STEP_PROMPT.replace('{step_number}', String(stepNumber))
    .replace('{total_steps}', String(plan.steps.length))
    .replace('{goal}', plan.goal)
    .replace('{description}', step.content)
    .replace('{criteria}', step.success_criteria ? `Success criteria: ${step.success_criteria}\n` : '');
}

/** The next step to run: the one a resumed checkpoint was in, else the first pending step whose dependencies completed. */
function nextStep(plan: ExecutionPlan): PlanTask | undefined {
  const done = new Set(plan.steps.filter((s) => s.status === 'completed').map((s) => s.id));
  return (
    plan.steps.find((s) => s.status === 'in_progress') ??
    plan.steps.find((s) => s.status === 'pending' && s.dependencies.every((d) => done.has(d)))
  );
}

/** A planned run's result: the last step's loop outcome over the whole run, and the plan with its final statuses. */
export interface PlanExecution {
  outcome: LoopOutcome;
  plan: ExecutionPlan;
}

/**
 * Run a plan's steps one at a time in dependency order, each as a loop on the shared transcript (the step's
 * instruction appended as a user message) under the run's one deadline, with the run's limits counted across
 * steps. Emits task_updated, step_start and step_end (and goal_progress when a goal is tracked); checkpoints
 * carry the plan so a resume continues the step it was in and then the rest. A step that does not complete
 * ends the run: the remaining steps are skipped (failure) or cancelled (cancel). Steps whose dependencies
 * never completed are skipped.
 */
export async function executePlan(
  deps: LoopDeps,
  ctx: InvocationContext,
  start: LoopState,
  progress: PlanProgress,
  deadline: number,
): Promise<PlanExecution> {
  const plan: ExecutionPlan = structuredClone(progress.plan);
  const total = plan.steps.length;
  const emitTasks = (): void =>
    ctx.emit('task_updated', { session_id: ctx.sessionId, tasks: plan.steps.map((s) => ({ ...s })) });
  let state = start;
  let outcome: LoopOutcome | undefined;
  let text = '';
  emitTasks();
  for (let step = nextStep(plan); step; step = nextStep(plan)) {
    const current = step;
    const number = plan.steps.indexOf(current) + 1;
    // A resumed checkpoint's step is already in progress: its loop continues where it stopped.
    if (current.status !== 'in_progress') {
      current.status = 'in_progress';
      emitTasks();
      ctx.emit('step_start', {
        step_id: current.id,
        description: current.content,
        step_number: number,
        total_steps: total,
      });
      const instruction: ChatMessage = { role: 'user', content: stepPrompt(plan, current, number) };
      state = { ...state, messages: [...state.messages, instruction] };
    }
    const stepDeps: LoopDeps = {
      ...deps,
      checkpoint: (loopState) =>
        deps.checkpoint?.(loopState, { ...progress, plan: structuredClone(plan), current_step_id: current.id }) ??
        Promise.resolve(),
    };
    outcome = await runLoopWithin(stepDeps, ctx, state.messages, deadline, state);
    state = outcome.state;
    if (outcome.text) text = outcome.text;
    const status: TaskStatus =
      outcome.status === 'completed' ? 'completed' : outcome.status === 'cancelled' ? 'cancelled' : 'failed';
    current.status = status;
    ctx.emit('step_end', { step_id: current.id, status, step_number: number, total_steps: total });
    if (status !== 'completed') {
      for (const rest of plan.steps)
        if (rest.status === 'pending') rest.status = status === 'cancelled' ? 'cancelled' : 'skipped';
      emitTasks();
      break;
    }
    emitTasks();
    if (progress.goal) {
      const completed = plan.steps.filter((s) => s.status === 'completed').length;
      ctx.emit('goal_progress', {
        goal: progress.goal.description,
        progress: total > 0 ? completed / total : 1,
        completed_steps: completed,
        total_steps: total,
      });
    }
  }
  const blocked = plan.steps.filter((s) => s.status === 'pending');
  if (blocked.length > 0) {
    for (const s of blocked) s.status = 'skipped';
    emitTasks();
  }
  // A plan always has a step, so the loop ran at least once; an empty one runs the plain loop.
  outcome ??= await runLoopWithin(deps, ctx, state.messages, deadline, state);
  return { outcome: { ...outcome, text: text || outcome.text }, plan };
}

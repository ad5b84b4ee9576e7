import type { ChatMessage } from '../../protocol/chat-message.js';
import type { PlanProgress } from '../../protocol/planning.js';
import { addUsage, type Usage } from '../../protocol/run-record.js';
import type { VerificationReport } from '../../protocol/verification.js';
import { GovernedCallError } from '../invocation/governed-call-error.js';
import type { InvocationContext } from '../invocation/invocation-context.js';
import { deadlineReason } from '../invocation/run-deadline-error.js';
import { withDeadline } from '../loop/run-deadline.js';
import { runLoopWithin, type LoopDeps, type LoopError, type LoopOutcome, type LoopState } from '../loop/run-loop.js';
import { executePlan } from './execute-plan.js';
import { planRun, type PlanningDeps } from './plan-run.js';
import { settleGoal } from './settle-goal.js';

/** What a run with planning or goal tracking needs: the planning stage's services, the loop's, and the run's reports. */
export interface PlannedRunDeps extends PlanningDeps {
  readonly loop: LoopDeps;
  /** Settles the run's pending verification reports and answers them: the goal's evidence. */
  runReports(): Promise<readonly VerificationReport[]>;
}

/** Where a resumed planned run continues: the checkpoint's loop state and, when it was planned, its plan. */
export interface PlannedResume {
  state: LoopState;
  plan?: PlanProgress;
}

const emptyState = (messages: ChatMessage[], usage: Usage): LoopState => ({
  turn: 0,
  messages,
  usage,
  toolCallsCount: 0,
  toolRounds: 0,
  parseFailures: 0,
  continuations: 0,
  lastCallKey: '',
  sameCallCount: 0,
});

/**
 * A run of a session with `planningMode` other than disabled, or `goalTracking`: planning (planRun), then the
 * plan's steps (executePlan) or the plain loop, then the goal check (settleGoal) of a completed run; all of it
 * under the run's one deadline, every provider call through the run's LLM invoker. Planning usage counts in
 * the run's usage from the first checkpoint on. A resumed run continues its checkpoint without planning again.
 */
export async function runWithPlanning(
  deps: PlannedRunDeps,
  ctx: InvocationContext,
  transcript: ChatMessage[],
  input: string,
  resume?: PlannedResume,
): Promise<LoopOutcome> {
  const deadline = ctx.hostEnv.now() + ctx.governance.maxExecutionTimeMs;
  const scope = withDeadline(ctx, deadline);
  const run = scope.ctx;
  try {
    let progress = resume?.plan;
    let goal = progress?.goal;
    let state = resume?.state;
    if (!state) {
      let planning;
      try {
        planning = await planRun(deps, run, input);
      } catch (error) {
        return stopped(run, transcript, error);
      }
      state = emptyState(transcript, planning.usage);
      const first = planning.plan?.steps[0];
      if (planning.plan && first)
        progress = {
          plan: planning.plan,
          current_step_id: first.id,
          ...(planning.goal ? { goal: planning.goal } : {}),
          started_ms: run.hostEnv.now(),
        };
      goal = planning.goal;
    }
    const startedMs = progress?.started_ms ?? run.hostEnv.now();
    let outcome: LoopOutcome;
    let totalSteps = 1;
    if (progress) {
      const execution = await executePlan(deps.loop, run, state, progress, deadline);
      outcome = execution.outcome;
      totalSteps = execution.plan.steps.length;
    } else {
      outcome = await runLoopWithin(deps.loop, run, state.messages, deadline, state);
      if (goal)
        run.emit('goal_progress', {
          goal: goal.description,
          progress: outcome.status === 'completed' ? 1 : 0,
          completed_steps: outcome.status === 'completed' ? 1 : 0,
          total_steps: 1,
        });
    }
    if (goal && outcome.status === 'completed') {
      try {
        const used = await settleGoal(deps.llm, run, goal, {
          text: outcome.text,
          reports: await deps.runReports(),
          totalSteps,
          startedMs,
        });
        outcome.usage = addUsage({ ...outcome.usage }, used);
      } catch (error) {
        // The work is done; a goal check the budget refused or a cancel interrupted leaves the goal open.
        run.emit('run_warning', {
          source: 'goal',
          message: `goal check not made: ${error instanceof Error ? error.message : String(error)}`,
          fallback: 'not achieved',
        });
      }
    }
    return outcome;
  } finally {
    scope.dispose();
  }
}

/** The outcome of a run stopped before its loop: a refused planning call, a cancel or the deadline. */
function stopped(ctx: InvocationContext, transcript: ChatMessage[], error: unknown): LoopOutcome {
  let status: LoopOutcome['status'] = 'failed';
  let failure: LoopError;
  if (error instanceof GovernedCallError) failure = { code: error.code, message: error.message };
  else if (deadlineReason(ctx.signal))
    failure = {
      code: 'MAX_EXECUTION_TIME',
      message: `the run exceeded maxExecutionTimeMs (${ctx.governance.maxExecutionTimeMs} ms)`,
    };
  else if (ctx.signal.aborted) {
    status = 'cancelled';
    failure = { code: 'CANCELLED', message: 'the run was cancelled' };
  } else throw error;
  const usage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  return {
    status,
    text: '',
    toolCallsCount: 0,
    usage,
    added: [],
    error: failure,
    messages: transcript,
    state: emptyState(transcript, usage),
  };
}

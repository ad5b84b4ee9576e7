import { z } from 'zod';
import { ComplexitySchema, type AgentGoal, type ExecutionPlan, type PlanTask } from '../../protocol/planning.js';

/** The most steps a plan may have (the prompt asks for at most 5; a longer answer is repaired). */
export const MAX_PLAN_STEPS = 12;

const StepAnswerSchema = z.object({
  id: z.string().trim().min(1).max(64),
  description: z.string().trim().min(1).max(4000),
  tool: z.string().max(128).optional(),
  dependencies: z.array(z.string()).max(MAX_PLAN_STEPS).optional(),
  success_criteria: z.string().max(4000).optional(),
});

const GoalAnswerSchema = z.object({
  description: z.string().trim().min(1).max(4000),
  success_criteria: z.array(z.string().max(2000)).max(16),
});

/** Step ids must be unique and dependencies must name earlier or later steps of the same plan. */
function stepProblems(steps: readonly z.infer<typeof StepAnswerSchema>[], ctx: z.RefinementCtx): void {
  const ids = new Set<string>();
  for (const [index, step] of steps.entries()) {
    if (ids.has(step.id))
      ctx.addIssue({ code: 'custom', path: ['steps', index, 'id'], message: `step id "${step.id}" is duplicated` });
    ids.add(step.id);
  }
  for (const [index, step] of steps.entries()) {
    for (const dep of step.dependencies ?? []) {
      if (!ids.has(dep) || dep === step.id)
        ctx.addIssue({
          code: 'custom',
          path: ['steps', index, 'dependencies'],
          message: `"${dep}" is not another step's id`,
        });
    }
  }
}

/** The seed's pre-analysis answer: intent, whether to plan, the goal and the plan, in one call. */
export const PreAnalysisAnswerSchema = z.object({
  intent: z.string().max(64),
  requires_planning: z.boolean(),
  goal: GoalAnswerSchema,
  execution_plan: z
    .object({
      // The seed maps an unknown complexity to Medium.
      complexity: z.string().max(32),
      steps: z.array(StepAnswerSchema).max(MAX_PLAN_STEPS),
      required_tools: z.array(z.string().max(128)).max(64).optional(),
    })
    .superRefine((plan, ctx) => stepProblems(plan.steps, ctx)),
  optimized_input: z.string().max(100_000).optional(),
});

/** A parsed pre-analysis answer. */
export type PreAnalysisAnswer = z.infer<typeof PreAnalysisAnswerSchema>;

/** The seed's goal-extraction answer. */
export const GoalAnswerOnlySchema = GoalAnswerSchema;

/** The seed's goal-achievement answer. */
export const AchievementAnswerSchema = z.object({
  achieved: z.boolean(),
  progress: z.number().min(0).max(1),
  remaining_criteria: z.array(z.string().max(2000)).max(32),
});

/** A parsed achievement answer. */
export type AchievementAnswer = z.infer<typeof AchievementAnswerSchema>;

/** The ExecutionPlan of a pre-analysis answer, every step pending. */
export function planOf(answer: PreAnalysisAnswer, fallbackGoal: string): ExecutionPlan {
  const steps: PlanTask[] = answer.execution_plan.steps.map((step) => ({
    id: step.id,
    content: step.description,
    status: 'pending',
    priority: 'medium',
    ...(step.tool?.trim() ? { tool: step.tool.trim() } : {}),
    dependencies: step.dependencies ?? [],
    ...(step.success_criteria?.trim() ? { success_criteria: step.success_criteria.trim() } : {}),
  }));
  const complexity = ComplexitySchema.safeParse(answer.execution_plan.complexity);
  return {
    goal: answer.goal.description || fallbackGoal,
    steps,
    complexity: complexity.success ? complexity.data : 'Medium',
    required_tools: [...new Set(answer.execution_plan.required_tools ?? [])],
    estimated_steps: steps.length,
  };
}

/** The seed's fallback plan: the request itself as the one honest step. */
export function fallbackPlan(prompt: string): ExecutionPlan {
  const content = prompt.trim() || 'Complete the requested task';
  return {
    goal: content,
    steps: [{ id: 'step-1', content, status: 'pending', priority: 'medium', dependencies: [] }],
    complexity: 'Simple',
    required_tools: [],
    estimated_steps: 1,
  };
}

/** A goal as the seed's AgentGoal (created_at in epoch seconds). */
export function goalOf(description: string, criteria: readonly string[], nowMs: number): AgentGoal {
  return {
    description,
    success_criteria: [...criteria],
    progress: 0,
    achieved: false,
    created_at: Math.floor(nowMs / 1000),
  };
}

import { z } from 'zod';

/** The seed's TaskStatus (snake_case). */
export const TaskStatusSchema = z
  .enum(['pending', 'in_progress', 'completed', 'failed', 'skipped', 'cancelled'])
  .meta({ id: 'TaskStatus' });

/** A plan step's status. */
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

/** The seed's Task: one plan step (task_updated, planning_end). */
export const PlanTaskSchema = z
  .object({
    id: z.string(),
    content: z.string(),
    status: TaskStatusSchema,
    priority: z.enum(['high', 'medium', 'low']),
    tool: z.string().optional(),
    dependencies: z.array(z.string()),
    success_criteria: z.string().optional(),
  })
  .meta({ id: 'PlanTask' });

/** One plan step. */
export type PlanTask = z.infer<typeof PlanTaskSchema>;

/** The seed's plan complexity levels. */
export const ComplexitySchema = z.enum(['Simple', 'Medium', 'Complex', 'VeryComplex']);

/** The seed's ExecutionPlan (planning_end.plan). */
export const ExecutionPlanSchema = z
  .object({
    goal: z.string(),
    steps: z.array(PlanTaskSchema),
    complexity: ComplexitySchema,
    required_tools: z.array(z.string()),
    estimated_steps: z.number().int().nonnegative(),
  })
  .meta({ id: 'ExecutionPlan' });

/** An execution plan. */
export type ExecutionPlan = z.infer<typeof ExecutionPlanSchema>;

/** The seed's AgentGoal (goal_extracted.goal); timestamps in epoch seconds as the seed writes them. */
export const AgentGoalSchema = z
  .object({
    description: z.string(),
    success_criteria: z.array(z.string()),
    progress: z.number().min(0).max(1),
    achieved: z.boolean(),
    created_at: z.number().int(),
    achieved_at: z.number().int().nullable().optional(),
  })
  .meta({ id: 'AgentGoal' });

/** A run's goal. */
export type AgentGoal = z.infer<typeof AgentGoalSchema>;

/** The plan progress a planned run's loop checkpoint carries, so a resume continues with the remaining steps. */
export const PlanProgressSchema = z
  .object({
    plan: ExecutionPlanSchema,
    /** The step whose loop the checkpoint belongs to. */
    current_step_id: z.string(),
    goal: AgentGoalSchema.optional(),
    /** When planning ended (epoch ms): goal_achieved.duration_ms counts from here. */
    started_ms: z.number().int().nonnegative(),
  })
  .meta({ id: 'PlanProgress' });

/** A planned run's progress at a checkpoint. */
export type PlanProgress = z.infer<typeof PlanProgressSchema>;

import type { AgentEventEnvelope } from '../../protocol/agent-event-envelope.js';

/**
 * The AG-UI state a run's event changes (a STATE_SNAPSHOT merges it into the run's state): its plan, tasks, goal
 * and goal progress, and its stored change set. Undefined for every other event.
 */
export function aguiStateChange(event: AgentEventEnvelope): Record<string, unknown> | undefined {
  switch (event.type) {
    case 'planning_end':
      return { plan: event.payload.plan };
    case 'task_updated':
      return { tasks: event.payload.tasks };
    case 'goal_extracted':
      return { goal: event.payload.goal };
    case 'goal_progress':
      return {
        goalProgress: {
          progress: event.payload.progress,
          completedSteps: event.payload.completed_steps,
          totalSteps: event.payload.total_steps,
        },
      };
    case 'goal_achieved':
      return { goalAchieved: true };
    case 'run_changes_captured':
      // The run's change set is stored: a frontend reads it with GET .../runs/:runId/changes (docs/changes.md).
      return {
        changes: {
          runId: event.payload.run_id,
          files: event.payload.files,
          patchBytes: event.payload.patch_bytes,
          patchDigest: event.payload.patch_digest,
        },
      };
    default:
      return undefined;
  }
}

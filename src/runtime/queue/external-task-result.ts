import type { ToolResult } from '../tools/define-tool.js';
import type { ExternalTask, Settlement } from './external-tasks.js';
import type { LaneCommand } from './lane-command.js';
import type { LaneSettings } from './queue-settings.js';

/** The tool result the model sees for a settled external task. */
export function externalTaskResult(
  task: ExternalTask,
  settlement: Settlement,
  state: LaneSettings,
  command: LaneCommand,
): ToolResult {
  const metadata = { external_task_id: task.task_id, lane_mode: 'external' };
  if (settlement.kind === 'cancelled') {
    const stopped = command.stopped('while waiting for the host (external task)');
    return { ...stopped, metadata: { ...stopped.metadata, ...metadata } };
  }
  if (settlement.kind === 'timed_out') {
    return {
      output: `Tool ${task.command_type} timed out: the host did not complete external task ${task.task_id} within ${task.timeout_ms} ms (${state.timeoutSource}).`,
      exitCode: 1,
      metadata: { ...metadata, timed_out: true },
      errorKind: { type: 'timeout', op: task.command_type, duration_ms: task.timeout_ms },
    };
  }
  const { success, result, error } = settlement.answer;
  if (success) return { output: textOf(result), exitCode: 0, metadata };
  return {
    output:
      error ?? (result !== undefined ? textOf(result) : `the host reported external task ${task.task_id} as failed`),
    exitCode: 1,
    metadata: { ...metadata, external_failed: true },
  };
}

/** A host result as tool output: a string as is, anything else as JSON (nothing: empty). */
function textOf(result: unknown): string {
  if (result === undefined || result === null) return '';
  return typeof result === 'string' ? result : JSON.stringify(result);
}

import type { RunRecord } from '../../protocol/run-record.js';
import type { ParallelTaskParams, SubagentTaskSnapshot } from '../../protocol/subagent-task.js';
import type { ToolResult } from '../tools/define-tool.js';
import type { SubagentTasks } from './subagent-tasks.js';
import { cutTaskOutput, parseStructured } from './task-output.js';

/** Where a task's whole output goes when its result is cut (the session's artifacts). */
export interface ArtifactSink {
  storeArtifact(content: string, toolCallId: string, toolName: string): string | undefined;
}

/** A tool error the model sees. */
export function taskFailure(output: string, metadata: Record<string, unknown> = {}): ToolResult {
  return { output, exitCode: 1, metadata, errorKind: { type: 'invalid_argument', message: output } };
}

/** A child's task as the delegating call's result: its output (cut, the whole of it stored as an artifact), its task metadata. */
export function taskResult(
  task: SubagentTaskSnapshot,
  name: 'task' | 'Skill',
  toolCallId: string,
  artifacts: ArtifactSink,
): ToolResult {
  const full = task.output ?? '';
  const cut = cutTaskOutput(full);
  const artifactId = cut.truncated ? artifacts.storeArtifact(full, toolCallId, name) : undefined;
  const metadata: Record<string, unknown> = {
    task_id: task.task_id,
    session_id: task.session_id,
    agent: task.agent,
    success: task.success === true,
    status: task.status,
    ...(task.structured !== undefined ? { structured: task.structured } : {}),
    ...(artifactId ? { artifact_id: artifactId } : {}),
    ...(task.error ? { error: task.error } : {}),
  };
  if (task.success)
    return {
      output: artifactId ? `${cut.text}\n[full output: artifact ${artifactId}]` : cut.text,
      exitCode: 0,
      metadata,
    };
  const reason = task.error ? `${task.error.code}: ${task.error.message}` : 'it did not complete';
  const output = `Task ${task.task_id} (agent ${task.agent}) ${task.status === 'cancelled' ? 'was cancelled' : 'failed'}: ${reason}${cut.text ? `\n${cut.text}` : ''}`;
  return {
    output,
    exitCode: 1,
    metadata,
    ...(task.status === 'cancelled' ? { errorKind: { type: 'cancelled' as const, op: name } } : {}),
  };
}

/** A parallel_task's result: one section per task, failed when fewer than min_success_count succeeded. */
export function parallelResult(
  params: ParallelTaskParams,
  results: readonly SubagentTaskSnapshot[],
  toolCallId: string,
  artifacts: ArtifactSink,
): ToolResult {
  const succeeded = results.filter((task) => task.success === true).length;
  const total = results.length;
  const required = params.min_success_count ?? (params.allow_partial_failure ? 1 : total);
  const ok = succeeded >= Math.min(required, total);
  const items = results.map((task) => taskResult(task, 'task', toolCallId, artifacts));
  const sections = results.map(
    (task, index) =>
      `## Task ${index + 1}: ${task.description} (agent ${task.agent}, ${task.task_id}): ${task.success ? 'succeeded' : task.status}\n${items[index]!.output}`,
  );
  const output = `${succeeded} of ${total} tasks succeeded${ok ? '' : ` (needed ${Math.min(required, total)})`}.\n\n${sections.join('\n\n')}`;
  const metadata = { succeeded, failed: total - succeeded, total, tasks: items.map((item) => item.metadata) };
  return ok
    ? { output, exitCode: 0, metadata }
    : { output, exitCode: 1, metadata, errorKind: { type: 'partial_failure', failed: total - succeeded, total } };
}

/** A finished child run as its task's outcome. */
export function outcomeOf(
  record: RunRecord,
  outputSchema: Record<string, unknown> | undefined,
): Parameters<SubagentTasks['finish']>[1] {
  const text = record.result?.text ?? '';
  const status = record.status === 'completed' ? 'completed' : record.status === 'cancelled' ? 'cancelled' : 'failed';
  const structured = status === 'completed' && outputSchema ? parseStructured(text) : undefined;
  return {
    status,
    output: text,
    error: record.error ? { code: record.error.code, message: record.error.message } : null,
    ...(structured !== undefined ? { structured } : {}),
    usage: record.result,
  };
}

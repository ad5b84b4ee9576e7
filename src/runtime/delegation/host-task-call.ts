import type {
  ConfirmationInheritance,
  ParallelTaskParams,
  TaskParams,
  TaskRequest,
} from '../../protocol/subagent-task.js';

/** A host task request (camelCase, the seed's SDK names) as the tool call it becomes. */
export function hostTaskCall(request: TaskRequest): {
  name: 'task' | 'parallel_task';
  args: TaskParams | ParallelTaskParams;
  inheritance: ConfirmationInheritance | undefined;
} {
  const item = (task: {
    agent: string;
    description: string;
    prompt: string;
    background?: boolean | undefined;
    maxSteps?: number | undefined;
    outputSchema?: Record<string, unknown> | undefined;
  }): TaskParams => ({
    agent: task.agent,
    description: task.description,
    prompt: task.prompt,
    ...(task.background !== undefined ? { background: task.background } : {}),
    ...(task.maxSteps !== undefined ? { max_steps: task.maxSteps } : {}),
    ...(task.outputSchema !== undefined ? { output_schema: task.outputSchema } : {}),
  });
  if ('tasks' in request) {
    const args: ParallelTaskParams = {
      tasks: request.tasks.map(item),
      ...(request.allowPartialFailure !== undefined ? { allow_partial_failure: request.allowPartialFailure } : {}),
      ...(request.timeoutMs !== undefined ? { timeout_ms: request.timeoutMs } : {}),
      ...(request.minSuccessCount !== undefined ? { min_success_count: request.minSuccessCount } : {}),
    };
    return { name: 'parallel_task', args, inheritance: request.confirmationInheritance };
  }
  return { name: 'task', args: item(request), inheritance: request.confirmationInheritance };
}

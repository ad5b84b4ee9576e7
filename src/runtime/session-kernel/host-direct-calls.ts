import { CodeError } from '../../errors.js';
import type { ConfirmationInheritance, TaskRequest } from '../../protocol/subagent-task.js';
import { hostTaskCall } from '../delegation/host-task-call.js';
import type { ToolCallOutcome } from '../invocation/tool-invoker.js';
import { sessionInvocationContext, type InvocationContextSource } from './session-invocation-context.js';
import type { SessionLifecycle } from './session-lifecycle.js';
import type { SessionTools } from './session-tools.js';

/** What host-direct calls need from their session. */
export interface HostDirectCallsDeps extends InvocationContextSource {
  readonly lifecycle: SessionLifecycle;
  /** The session's tools and its one tool invoker. */
  readonly tools: SessionTools;
}

/**
 * A session's host-direct tool calls (no lease, no model): single calls, host-selected tasks, and the
 * controllers of the calls in flight so closing the session aborts them.
 */
export class HostDirectCalls {
  /** Created on the first call: most sessions never get a host-direct call. */
  private inFlightSet: Set<AbortController> | undefined;

  constructor(private readonly deps: HostDirectCallsDeps) {}

  private get inFlight(): Set<AbortController> {
    this.inFlightSet ??= new Set();
    return this.inFlightSet;
  }

  /**
   * Run one tool call from the host; events carry no run id. `host_direct` skips the permission and
   * confirmation decisions; `governed_direct` applies them in full.
   */
  async invoke(
    name: string,
    args: unknown,
    origin: 'host_direct' | 'governed_direct' = 'host_direct',
    confirmationInheritance?: ConfirmationInheritance,
  ): Promise<ToolCallOutcome> {
    const { deps } = this;
    deps.lifecycle.assertOpen();
    if (!deps.tools.has(name)) throw new CodeError('TOOL_NOT_FOUND', `tool ${name} not found`, { tool: name });
    const callId = deps.hostEnv.newId('call');
    const controller = new AbortController();
    this.inFlight.add(controller);
    try {
      const ctx = sessionInvocationContext(deps, callId, controller.signal, undefined);
      return await deps.tools.invoker.invoke(
        { id: callId, name, args, origin, ...(confirmationInheritance ? { confirmationInheritance } : {}) },
        ctx,
      );
    } finally {
      this.inFlight.delete(controller);
    }
  }

  /**
   * Run host-selected tasks (POST .../tasks, the seed's `session.task()` / `session.tasks()`): one `task` or
   * `parallel_task` call on the host-direct path; the children's own calls are governed as always.
   */
  async runTasks(request: TaskRequest): Promise<ToolCallOutcome> {
    const { name, args, inheritance } = hostTaskCall(request);
    return this.invoke(name, args, 'host_direct', inheritance);
  }

  /** Abort every call in flight. */
  abortAll(reason: Error): void {
    for (const controller of this.inFlightSet ?? []) controller.abort(reason);
  }
}

import { CodeError } from '../../errors.js';
import type { ConfirmationInheritance, TaskRequest } from '../../protocol/subagent-task.js';
import { hostTaskCall } from '../delegation/host-task-call.js';
import type { InvocationContext } from '../invocation/invocation-context.js';
import type { ToolCallOutcome, ToolInvoker } from '../invocation/tool-invoker.js';
import type { HostEnv } from '../ports/host-env.js';

/** What host-direct calls need from their session. */
export interface HostDirectCallsDeps {
  readonly hostEnv: HostEnv;
  /** Throw SESSION_CLOSED when the session is closed. */
  assertOpen(): void;
  /** True when the session's registry has a tool of this name. */
  hasTool(name: string): boolean;
  /** The invocation context of one host-direct call (no run id on its events). */
  context(callId: string, signal: AbortSignal): InvocationContext;
  /** The session's one tool invoker. */
  invoker(): ToolInvoker;
}

/**
 * A session's host-direct tool calls (no lease, no model): single calls, host-selected tasks, and the
 * controllers of the calls in flight so closing the session aborts them.
 */
export class HostDirectCalls {
  /** Created on the first call: most sessions never get a host-direct call. */
  private inFlightSet: Set<AbortController> | undefined;
  private resolved: HostDirectCallsDeps | undefined;

  /** `wire` is called on the first call. */
  constructor(private readonly wire: () => HostDirectCallsDeps) {}

  private get deps(): HostDirectCallsDeps {
    this.resolved ??= this.wire();
    return this.resolved;
  }

  private get inFlight(): Set<AbortController> {
    this.inFlightSet ??= new Set();
    return this.inFlightSet;
  }

  /**
   * Run one tool call from the host; events carry no run id. `host_direct` skips the permission and
   * confirmation decisions; `governed_direct` applies them in full.
   */
  async invoke(name: string, args: unknown, origin: 'host_direct' | 'governed_direct' = 'host_direct', confirmationInheritance?: ConfirmationInheritance): Promise<ToolCallOutcome> {
    this.deps.assertOpen();
    if (!this.deps.hasTool(name)) throw new CodeError('TOOL_NOT_FOUND', `tool ${name} not found`, { tool: name });
    const callId = this.deps.hostEnv.newId('call');
    const controller = new AbortController();
    this.inFlight.add(controller);
    try {
      const ctx = this.deps.context(callId, controller.signal);
      return await this.deps.invoker().invoke({ id: callId, name, args, origin, ...(confirmationInheritance ? { confirmationInheritance } : {}) }, ctx);
    } finally {
      this.inFlight.delete(controller);
    }
  }

  /** Run host-selected tasks: one `task` or `parallel_task` call on the host-direct path (the children's own calls are governed). */
  async runTasks(request: TaskRequest): Promise<ToolCallOutcome> {
    const { name, args, inheritance } = hostTaskCall(request);
    return this.invoke(name, args, 'host_direct', inheritance);
  }

  /** Abort every call in flight. */
  abortAll(reason: Error): void {
    for (const controller of this.inFlightSet ?? []) controller.abort(reason);
  }
}

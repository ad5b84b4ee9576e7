import type { EventSink } from '../invocation/invocation-context.js';
import type { ToolResult } from '../tools/define-tool.js';

/** A bound on a call run here, with the option that set it (named in the timeout result). */
export interface ExecutionBound {
  readonly ms: number;
  readonly source: string;
}

/** One governed tool call submitted to its lane by the tool invoker. */
export interface LaneCommand {
  /** The call's id (tool_call id). */
  readonly id: string;
  /** The tool name: picks the lane, and is the external task's `command_type`. */
  readonly commandType: string;
  /** The validated arguments (the external task's `payload`). */
  readonly payload: unknown;
  /** The run's signal: aborting it removes a waiting call and settles a pending external task as cancelled. */
  readonly signal: AbortSignal;
  readonly runId?: string;
  readonly emit: EventSink;
  /** Called once the call holds its lane's slot, before it runs (here or at the host). */
  admitted(): void;
  /** Run the call here. */
  internal(bound: ExecutionBound | undefined): Promise<ToolResult>;
  /** The result of a call stopped by its signal `when` (e.g. "while waiting in the execute lane"). */
  stopped(when: string): ToolResult;
}

/** Runs a session's control operations through its control lane (SessionQueue.control). */
export interface ControlLane {
  control<T>(operation: () => T): T;
}

import type { ToolResult } from '../../tools/define-tool.js';
import type { ExecutionBound } from '../../queue/lane-command.js';
import type { ToolCallState } from '../tool-call-state.js';
import { stoppedResult } from './execute.js';

/**
 * Stage 7 (around execute): a governed call of a session with a lane queue waits for its lane's slot, then
 * runs here, at the host (external lane) or both (hybrid). Host-direct calls, and the orchestrators and
 * delegating tools whose own children pass through the lanes, go straight to `run` (so a batch never holds
 * the slot its children wait for). `admitted` is called right before the call runs, wherever it runs.
 */
export function laneAdmission(
  state: ToolCallState,
  admitted: () => void,
  run: (bound?: ExecutionBound) => Promise<ToolResult>,
): Promise<ToolResult> {
  const { call, ctx, tool } = state;
  const queue = state.deps.queue;
  if (!queue || !tool || call.origin === 'host_direct' || tool.orchestrator || tool.delegates) {
    admitted();
    return run();
  }
  return queue.submit({
    id: call.id,
    commandType: tool.name,
    payload: state.args,
    signal: ctx.signal,
    ...(ctx.runId ? { runId: ctx.runId } : {}),
    emit: ctx.emit,
    admitted,
    internal: run,
    stopped: (when) => stoppedResult(tool.name, ctx.signal, when),
  });
}

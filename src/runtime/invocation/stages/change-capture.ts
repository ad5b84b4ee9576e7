import { isReadOnlyCall } from '../../tools/define-tool.js';
import { CONTINUE, type ToolStage } from '../tool-call-state.js';

/**
 * Before a call that may change files runs, its run's base tree is captured (once per run; docs/changes.md). A
 * read-only call (`readOnly`, `readOnlyFor`) costs nothing; MCP tools (their schema is the server's `jsonSchema`)
 * count as mutating whatever their hints say. A capture failure never stops the call: the run just has no change set.
 */
export const changeCapture: ToolStage = async (state) => {
  const changes = state.deps.changes;
  const tool = state.tool;
  if (!changes || !tool) return CONTINUE;
  if (tool.jsonSchema === undefined && isReadOnlyCall(tool, state.args)) return CONTINUE;
  await changes.beforeMutation(state.ctx.runId);
  state.mutating = true;
  return CONTINUE;
};

import type { ToolResult } from '../../tools/define-tool.js';
import type { ToolCallState } from '../tool-call-state.js';

/** Stage 9: post_tool_use hooks observe the (sanitised) result; they never block (nothing is built when none listens). */
export function postToolHooks(state: ToolCallState, result: ToolResult): void {
  const hooks = state.deps.governance.hooks;
  if (!hooks?.wants('post_tool_use')) return;
  const name = state.tool?.name ?? state.call.name;
  hooks.observe(
    'post_tool_use',
    {
      session_id: state.ctx.sessionId,
      tool: name,
      args: state.args,
      result: { output: result.output, exit_code: result.exitCode },
      labels: state.deps.governance.labels ?? {},
    },
    { toolName: name, args: state.args, sessionId: state.ctx.sessionId },
  );
}

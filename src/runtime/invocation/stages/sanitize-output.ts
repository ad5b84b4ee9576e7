import type { ToolResult } from '../../tools/define-tool.js';
import type { ToolCallState } from '../tool-call-state.js';

/** Stage 8: redact secrets (API keys, bearer tokens, private keys, configured secrets) from the output. */
export function sanitizeOutput(state: ToolCallState, result: ToolResult): ToolResult {
  const { text, count } = state.deps.governance.redactor.redact(result.output);
  if (count === 0) return result;
  return { ...result, output: text, metadata: { ...(result.metadata ?? {}), redacted_secrets: count } };
}

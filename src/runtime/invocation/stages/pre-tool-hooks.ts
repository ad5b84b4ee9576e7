import { CONTINUE, stopWith, type StageVerdict, type ToolCallState } from '../tool-call-state.js';
import { parseToolArgs } from './validate-args.js';

/** How often a `retry` answer makes the hooks be asked again before the call is blocked. */
export const MAX_HOOK_RETRIES = 2;
/** `hook_denied.retry_after_ms` of a call blocked because its hook kept asking to retry (the seed's default retry delay). */
export const HOOK_RETRY_AFTER_MS = 1000;

/**
 * Stage 3: pre_tool_use hooks may block, skip, continue with modified (re-validated) arguments, or ask
 * to be asked again (`retry`, e.g. a host that is not ready yet): at most MAX_HOOK_RETRIES times, then
 * the call is blocked.
 */
export async function preToolHooks(state: ToolCallState): Promise<StageVerdict> {
  const hooks = state.deps.governance.hooks;
  const tool = state.tool;
  // No pre_tool_use hook: no payload, no await (the common case on every call).
  if (!hooks || !tool || !hooks.wants('pre_tool_use')) return CONTINUE;
  const ask = (attempt: number) =>
    hooks.gate(
      'pre_tool_use',
      {
        session_id: state.ctx.sessionId,
        tool: tool.name,
        args: state.args,
        origin: state.call.origin,
        attempt,
        labels: state.deps.governance.labels ?? {},
      },
      { toolName: tool.name, args: state.args, sessionId: state.ctx.sessionId },
      state.ctx.signal,
    );
  let outcome = await ask(0);
  for (let attempt = 1; outcome.action === 'retry' && attempt <= MAX_HOOK_RETRIES; attempt++)
    outcome = await ask(attempt);
  const retriesSpent = outcome.action === 'retry';
  if (retriesSpent)
    outcome = {
      ...outcome,
      action: 'block',
      reason: `hook asked to retry more than ${MAX_HOOK_RETRIES} times${outcome.reason ? `: ${outcome.reason}` : ''}`,
    };
  const by = outcome.hookId ? ` by hook ${outcome.hookId}` : '';
  if (outcome.action === 'block') {
    state.ctx.emit('hook_blocked', {
      tool_id: state.call.id,
      tool_name: tool.name,
      hook_id: outcome.hookId ?? null,
      reason: outcome.reason ?? '',
    });
    const errorKind = {
      type: 'hook_denied' as const,
      reason: outcome.reason ?? '',
      retryable: retriesSpent,
      ...(retriesSpent ? { retry_after_ms: HOOK_RETRY_AFTER_MS } : {}),
    };
    return stopWith(
      `Tool ${tool.name} was blocked${by}${outcome.reason ? `: ${outcome.reason}` : ''}`,
      { blocked_by: outcome.hookId ?? 'hook' },
      false,
      errorKind,
    );
  }
  if (outcome.action === 'skip') {
    return {
      kind: 'stop',
      result: {
        output: `Tool ${tool.name} was skipped${by}${outcome.reason ? `: ${outcome.reason}` : ''}`,
        exitCode: 0,
        metadata: { skipped_by: outcome.hookId ?? 'hook' },
      },
    };
  }
  if (outcome.modifiedArgs !== undefined) {
    const parsed = parseToolArgs(outcome.modifiedArgs, tool.parameters);
    if (!parsed.ok)
      return stopWith(`Hook${by} modified the arguments of ${tool.name} into invalid ones: ${parsed.error}`);
    state.args = parsed.value;
  }
  return CONTINUE;
}

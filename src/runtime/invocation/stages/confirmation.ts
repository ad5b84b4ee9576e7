import { permissionGrantRequest } from '../../policy/permission-grant.js';
import { OPERATOR_RULE_PREFIX } from '../../policy/permission-policy.js';
import { callSubjects } from '../call-subjects.js';
import { CONTINUE, stopWith, type StageVerdict, type ToolCallState } from '../tool-call-state.js';

/**
 * Stage 6: human confirmation for calls the policy asked about. permission_request hooks run first
 * (block or skip deny). With confirmation disabled the call is denied with a reason naming the rule and
 * the options that would change it. An approval is bound to this tool id and its arguments, used once.
 */
export async function confirmation(state: ToolCallState): Promise<StageVerdict> {
  const rule = state.askRule;
  if (rule === undefined) return CONTINUE;
  const { governance } = state.deps;
  const { ctx, call } = state;
  const name = state.tool?.name ?? call.name;
  if (governance.hooks?.wants('permission_request')) {
    const outcome = await governance.hooks.gate(
      'permission_request',
      { session_id: ctx.sessionId, tool: name, args: state.args, rule, labels: governance.labels ?? {} },
      { toolName: name, args: state.args, sessionId: ctx.sessionId },
      ctx.signal,
    );
    if (outcome.action === 'block' || outcome.action === 'skip') {
      const reason = `denied by permission_request hook${outcome.hookId ? ` ${outcome.hookId}` : ''}${outcome.reason ? `: ${outcome.reason}` : ''}`;
      ctx.emit('permission_denied', { tool_id: call.id, tool_name: name, args: state.args, reason, rule });
      return stopWith(`Tool ${name} was ${reason}.`, { denied_by: outcome.hookId ?? 'hook' });
    }
  }
  const policy = governance.confirmation;
  if (!policy.enabled) {
    const remedy = rule.startsWith(OPERATOR_RULE_PREFIX)
      ? "the operator's default_permission_policy bounds sessions created without the host_direct scope; enable confirmationPolicy, or create the session with a host_direct token"
      : 'allow it in permissionPolicy.allow or enable confirmationPolicy';
    const reason = `needs confirmation (permission rule "${rule}") but confirmationPolicy.enabled is false; ${remedy}`;
    ctx.emit('permission_denied', { tool_id: call.id, tool_name: name, args: state.args, reason, rule });
    return stopWith(`Tool ${name} was denied: it ${reason}.`, { denied_by: rule });
  }
  const outcome = await governance.broker.request({
    toolId: call.id,
    toolName: name,
    args: state.args,
    runId: ctx.runId,
    timeoutMs: policy.defaultTimeoutMs,
    timeoutAction: policy.timeoutAction,
    signal: ctx.signal,
    grant: permissionGrantRequest(name, state.args, governance.grantFloor, {
      workspace: ctx.workspace,
      subjects: callSubjects(state),
    }),
    onRequested: (pending) =>
      ctx.emit('confirmation_required', {
        tool_id: call.id,
        tool_name: name,
        args: state.args,
        timeout_ms: pending.timeoutMs,
        args_digest: pending.argsDigest,
        rule,
      }),
  });
  if (outcome.timedOut)
    ctx.emit('confirmation_timeout', {
      tool_id: call.id,
      tool_name: name,
      action_taken: outcome.approved ? 'auto_approved' : 'rejected',
    });
  else
    ctx.emit('confirmation_received', {
      tool_id: call.id,
      approved: outcome.approved,
      reason: outcome.reason ?? null,
      tool_name: name,
    });
  if (governance.hooks?.wants('on_confirmation')) {
    // Settled by a cancel (the run's or the session's close) rather than by an answer or the timeout.
    const cancelled = outcome.cancelled === true || (!outcome.timedOut && !outcome.approved && ctx.signal.aborted);
    governance.hooks.observe(
      'on_confirmation',
      {
        session_id: ctx.sessionId,
        run_id: ctx.runId,
        tool_id: call.id,
        tool_name: name,
        args: state.args,
        outcome: outcome.timedOut ? 'timeout' : cancelled ? 'cancelled' : outcome.approved ? 'approved' : 'rejected',
        approved: outcome.approved,
        reason: outcome.reason ?? null,
        ...(outcome.timedOut ? { action_taken: outcome.approved ? 'auto_approved' : 'rejected' } : {}),
        labels: governance.labels ?? {},
      },
      { toolName: name, args: state.args, sessionId: ctx.sessionId },
    );
  }
  if (outcome.approved) return CONTINUE;
  const why = outcome.timedOut
    ? `no confirmation within ${policy.defaultTimeoutMs} ms (timeoutAction reject)`
    : `rejected${outcome.reason ? `: ${outcome.reason}` : ''}`;
  return stopWith(`Tool ${name} was not run: ${why}.`, { rejected: true });
}

import { legacyPermissionGrantKey, permissionGrantKey } from '../../policy/permission-grant.js';
import { evaluateBoundedPermission } from '../../policy/permission-policy.js';
import { callSubjects } from '../call-subjects.js';
import { CONTINUE, stopWith, type StageVerdict, type ToolCallState } from '../tool-call-state.js';

/** Origins whose calls skip the model-facing permission and confirmation decisions. */
export function isTrustedOrigin(origin: ToolCallState['call']['origin']): boolean {
  return origin === 'host_direct';
}

/** Stage 4: the permission policy (deny -> error result; ask -> an "allow always" grant, or the confirmation stage; allow -> on). */
export async function permission(state: ToolCallState): Promise<StageVerdict> {
  if (isTrustedOrigin(state.call.origin)) return CONTINUE;
  const { governance } = state.deps;
  // Nothing to evaluate (a disabled policy with no bound allows every call): no subjects are made.
  if (!governance.permission.enabled && !governance.permissionFloor && !governance.agentPermissions?.length)
    return CONTINUE;
  const name = state.tool?.name ?? state.call.name;
  const context = { workspace: state.ctx.workspace, subjects: callSubjects(state) };
  const verdict = evaluateBoundedPermission(
    governance.permission,
    governance.permissionFloor,
    name,
    state.args,
    context,
    governance.agentPermissions,
  );
  if (verdict.decision === 'allow') return CONTINUE;
  if (verdict.decision === 'deny') {
    const reason = `denied by permission rule "${verdict.rule}"`;
    return denied(state, name, verdict.rule, reason, `Tool ${name} was ${reason} (permissionPolicy).`);
  }
  // An earlier "allow always" for the same tool and permission subject answers the ask (see ConfirmationBroker).
  // Grants saved before tools declared their paths are keyed by the seed's argument string: they keep granting
  // exactly what they granted then.
  if (
    governance.broker.grantCount > 0 &&
    (governance.broker.isGranted(permissionGrantKey(name, state.args, context)) ||
      governance.broker.isGranted(legacyPermissionGrantKey(name, state.args)))
  )
    return CONTINUE;
  // A child run under confirmationInheritance deny_on_ask / auto_approve answers the ask itself.
  if (governance.onAsk === 'approve') return CONTINUE;
  if (governance.onAsk === 'deny') {
    const reason = `needs confirmation (permission rule "${verdict.rule}"), and this child run denies what it would ask (confirmationInheritance deny_on_ask)`;
    return denied(state, name, verdict.rule, reason, `Tool ${name} was denied: it ${reason}.`);
  }
  state.askRule = verdict.rule;
  return CONTINUE;
}

/** A denied call: the permission_denied event, then the error result the model sees. */
function denied(state: ToolCallState, name: string, rule: string, reason: string, result: string): StageVerdict {
  state.ctx.emit('permission_denied', { tool_id: state.call.id, tool_name: name, args: state.args, reason, rule });
  return stopWith(result, { denied_by: rule });
}

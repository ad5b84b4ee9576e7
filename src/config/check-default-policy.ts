import type { CodeConfig } from './code-config.js';
import type { ConfigProblem } from './config-error.js';
import type { Provenance } from './provenance.js';
import { ruleProblems } from '../runtime/policy/permission-policy.js';

/**
 * Every rule of `default_permission_policy` that the sessions' rule parser refuses, as a problem at its file
 * line naming the rule: a bad rule fails at startup, not in every session creation.
 */
export function defaultPolicyProblems(config: CodeConfig, prov: Provenance): ConfigProblem[] {
  const policy = config.defaultPermissionPolicy;
  if (policy === undefined) return [];
  return ruleProblems(policy).map(({ field, index, message }) =>
    prov.problem(['defaultPermissionPolicy', field, index], message),
  );
}

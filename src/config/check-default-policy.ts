import type { CodeConfig } from './code-config.js';
import type { ConfigProblem } from './config-error.js';
import type { Provenance } from './provenance.js';
import { parseRule } from '../runtime/policy/permission-policy.js';

/**
 * Every rule of `default_permission_policy` that the sessions' rule parser refuses, as a problem at its file
 * line naming the rule: a bad rule fails at startup, not in every session creation.
 */
export function defaultPolicyProblems(config: CodeConfig, prov: Provenance): ConfigProblem[] {
  const policy = config.defaultPermissionPolicy;
  if (policy === undefined) return [];
  const problems: ConfigProblem[] = [];
  for (const field of ['deny', 'ask', 'allow'] as const) {
    policy[field].forEach((rule, index) => {
      try {
        parseRule(rule);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        problems.push(prov.problem(['defaultPermissionPolicy', field, index], message));
      }
    });
  }
  return problems;
}

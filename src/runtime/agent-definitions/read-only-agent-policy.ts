import type { PermissionPolicy } from '../../protocol/governance.js';
import { BUILTIN_DEFAULT_POLICY } from '../policy/permission-policy.js';

/**
 * The bound of the read-only built-in agents (explore, plan, review): the read-only tools of the built-in
 * default (read, grep, glob, ls, search_skills, read-only git) are allowed; the tools that write, run
 * commands or reach the network are denied by name, and every other tool (MCP tools included) by default.
 */
export const READ_ONLY_AGENT_POLICY: PermissionPolicy = {
  deny: [
    'bash',
    'write',
    'edit',
    'patch',
    'web_fetch',
    'web_search',
    'search',
    'download',
    'program',
    'batch',
    'task',
    'parallel_task',
  ],
  ask: [],
  allow: [...BUILTIN_DEFAULT_POLICY.allow],
  defaultDecision: 'deny',
  enabled: true,
};

const MUTATING_TOOLS = ['bash', 'write', 'edit', 'patch'];

/** True when a policy denies every tool that writes or runs commands and allows nothing by default. */
export function isReadOnlyPolicy(policy: PermissionPolicy | undefined): boolean {
  if (!policy || !policy.enabled || policy.defaultDecision !== 'deny') return false;
  const denied = new Set(policy.deny.map((rule) => rule.trim().toLowerCase()));
  const allowed = policy.allow.map((rule) => rule.trim().toLowerCase().replace(/\(.*$/s, ''));
  return MUTATING_TOOLS.every((tool) => denied.has(tool) || !allowed.includes(tool));
}

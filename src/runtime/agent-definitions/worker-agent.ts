import { CodeError, type ErrorCode } from '../../errors.js';
import type { WorkerAgentKind } from '../../protocol/agents.js';
import type { PermissionPolicy } from '../../protocol/governance.js';
import type { ConfirmationInheritance } from '../../protocol/subagent-task.js';
import type { WorkerAgentDefinition, WorkerAgentSpec } from '../../protocol/worker-agents.js';
import { BUILTIN_DEFAULT_POLICY, policyProblems } from '../policy/permission-policy.js';
import { agentBounds, type AgentDefinition } from './agent-definition.js';
import { BUILTIN_AGENTS, isBuiltinAgent } from './builtin-agents.js';
import { isReadOnlyPolicy, READ_ONLY_AGENT_POLICY } from './read-only-agent-policy.js';

/** The tools that delegate: no worker kind but `custom` (with its own permissions) delegates again. */
const DELEGATING = ['task', 'parallel_task'];

/** The implementer's bound: the session's policy decides everything but delegation, which is denied. */
const IMPLEMENTER_POLICY: PermissionPolicy = {
  deny: DELEGATING,
  ask: [],
  allow: [],
  defaultDecision: 'allow',
  enabled: true,
};

/** The verifier's bound: the read-only tools and bash (to run checks); no file tool that writes, no delegation. */
const VERIFIER_POLICY: PermissionPolicy = {
  deny: ['write', 'edit', 'patch', 'program', 'batch', ...DELEGATING],
  ask: [],
  allow: [...BUILTIN_DEFAULT_POLICY.allow, 'bash'],
  defaultDecision: 'deny',
  enabled: true,
};

/** The custom worker's default (the seed's `PermissionPolicy::strict()`): every call asks until permissions are given. */
const CUSTOM_POLICY: PermissionPolicy = { deny: [], ask: [], allow: [], defaultDecision: 'ask', enabled: true };

interface KindPreset {
  readonly bound: PermissionPolicy;
  /** The built-in agent whose prompt and prompt style the kind takes (custom: none, its description is the prompt). */
  readonly like: string | undefined;
  readonly maxSteps: number;
}

/** The seed's presets per kind (WorkerAgentKind::default_permissions / default_prompt / default_max_steps). */
const PRESETS: Readonly<Record<WorkerAgentKind, KindPreset>> = {
  read_only: { bound: READ_ONLY_AGENT_POLICY, like: 'explore', maxSteps: 20 },
  planner: { bound: READ_ONLY_AGENT_POLICY, like: 'plan', maxSteps: 30 },
  implementer: { bound: IMPLEMENTER_POLICY, like: 'general', maxSteps: 50 },
  verifier: { bound: VERIFIER_POLICY, like: 'verification', maxSteps: 30 },
  reviewer: { bound: READ_ONLY_AGENT_POLICY, like: 'review', maxSteps: 25 },
  custom: { bound: CUSTOM_POLICY, like: undefined, maxSteps: 30 },
};

/** Who registers workers: whether the caller may choose `auto_approve`, and which error code a bad spec gets. */
export interface WorkerRegistration {
  /** The caller has host_direct (or the operator's own default inheritance is auto_approve). */
  readonly mayAutoApprove: boolean;
  /** The field the specs came from (`workerAgents`, `workers`), for messages. */
  readonly field: string;
  readonly errorCode: ErrorCode;
}

function fail(registration: WorkerRegistration, field: string, message: string): CodeError {
  return new CodeError(registration.errorCode, `${field}: ${message}`, { field });
}

/**
 * A worker spec compiled into an agent (the seed's `WorkerAgentSpec::into_agent_definition`): the kind's bound,
 * prompt and steps unless the spec names its own. Its `permissions` narrow the kind's bound (they are a second
 * bound) except for `custom`, whose ask-everything default they replace; every bound is under the session's
 * policy and floor, so no worker gets more than its session (or a parent, for a delegated child).
 */
export function compileWorkerAgent(spec: WorkerAgentSpec): AgentDefinition {
  const preset = PRESETS[spec.kind];
  const like = preset.like === undefined ? undefined : BUILTIN_AGENTS.find((agent) => agent.name === preset.like);
  const bound = spec.kind === 'custom' && spec.permissions ? spec.permissions : preset.bound;
  const extra = spec.kind !== 'custom' && spec.permissions ? [spec.permissions] : [];
  const definition: AgentDefinition = {
    name: spec.name,
    description: spec.description,
    mode: like?.mode ?? 'general',
    prompt: spec.prompt?.trim() || like?.prompt || spec.description,
    permissions: bound,
    ...(extra.length > 0 ? { extraBounds: extra } : {}),
    ...(spec.model !== undefined ? { model: spec.model } : {}),
    maxSteps: spec.maxSteps ?? preset.maxSteps,
    source: 'session',
    readOnly: false,
    kind: spec.kind,
    hidden: spec.hidden === true,
    ...(spec.confirmationInheritance !== undefined ? { confirmationInheritance: spec.confirmationInheritance } : {}),
  };
  return { ...definition, readOnly: agentBounds(definition).some((policy) => isReadOnlyPolicy(policy)) };
}

/**
 * Compile workers for a registration: every name must be free of the built-ins and given once, every rule must
 * parse, and `auto_approve` (children run asks without a human) needs `mayAutoApprove`. Nothing is compiled
 * when one spec is bad.
 */
export function compileWorkerAgents(
  specs: readonly WorkerAgentSpec[],
  registration: WorkerRegistration,
): AgentDefinition[] {
  const seen = new Set<string>();
  for (const [index, spec] of specs.entries()) {
    const at = `${registration.field}.${index}`;
    if (isBuiltinAgent(spec.name))
      throw fail(registration, `${at}.name`, `"${spec.name}" is a built-in agent and cannot be redefined`);
    if (seen.has(spec.name)) throw fail(registration, `${at}.name`, `"${spec.name}" is given twice`);
    seen.add(spec.name);
    const problems = spec.permissions ? policyProblems(spec.permissions) : [];
    if (problems.length > 0) {
      const [where = ''] = problems[0].split(':');
      const path = where.replace(/\[(\d+)\]/g, '.$1');
      throw fail(registration, `${at}.permissions.${path}`, problems[0].slice(where.length + 1).trim());
    }
    if (spec.confirmationInheritance === 'auto_approve' && !registration.mayAutoApprove)
      throw new CodeError(
        'FORBIDDEN',
        `${at}.confirmationInheritance: "auto_approve" needs the host_direct scope (the worker's children would run what they ask without a human); use "inherit_parent" or "deny_on_ask"`,
        { field: `${at}.confirmationInheritance`, scope: 'host_direct' },
      );
  }
  return specs.map(compileWorkerAgent);
}

/** Whether a caller may give workers `auto_approve`: host_direct, or the operator made it the default anyway. */
export function mayAutoApprove(hostDirect: boolean, operatorDefault: ConfirmationInheritance): boolean {
  return hostDirect || operatorDefault === 'auto_approve';
}

/** A compiled worker in the seed's AgentDefinition shape (registerWorkerAgent's answer). */
export function workerAgentDefinition(agent: AgentDefinition, spec: WorkerAgentSpec): WorkerAgentDefinition {
  return {
    name: agent.name,
    description: agent.description,
    kind: spec.kind,
    native: false,
    hidden: agent.hidden === true,
    permissions: spec.permissions ?? PRESETS[spec.kind].bound,
    bounds: agentBounds(agent),
    ...(agent.model !== undefined ? { model: agent.model } : {}),
    prompt: agent.prompt,
    maxSteps: agent.maxSteps ?? PRESETS[spec.kind].maxSteps,
    ...(agent.confirmationInheritance !== undefined ? { confirmationInheritance: agent.confirmationInheritance } : {}),
  };
}

import type { ConfirmationBroker } from './confirmation-broker.js';
import type { ConfirmationPolicy, PermissionPolicy } from '../../protocol/governance.js';
import type { QuestionBroker } from './question-broker.js';
import type { SecretRedactor } from './secret-redactor.js';

/** What a gating hook run decided. */
export interface HookGateOutcome {
  action: 'continue' | 'block' | 'skip' | 'retry';
  reason?: string;
  modifiedArgs?: Record<string, unknown>;
  /** pre_prompt: fields a hook changed in the payload (e.g. `input`). */
  modifiedPayload?: Record<string, unknown>;
  hookId?: string;
}

/** Where hook matchers look: the tool, its arguments and the session. */
export interface HookMatch {
  toolName?: string;
  args?: unknown;
  sessionId: string;
  /** The skill the event is about (skill_load, skill_unload). */
  skill?: string;
}

/** The hook engine as the invokers see it. */
export interface GovernanceHooks {
  gate(
    event: string,
    payload: Record<string, unknown>,
    match: HookMatch,
    signal?: AbortSignal,
  ): Promise<HookGateOutcome>;
  observe(event: string, payload: Record<string, unknown>, match: HookMatch): void;
  /** True when some hook listens to `event`: test it before building a payload (no hook, no cost). */
  wants(event: string): boolean;
}

/** A budget decision (deny is never turned into an ungoverned fallback). */
export type GovernanceBudgetDecision =
  | { kind: 'allow' }
  | { kind: 'soft' | 'deny'; resource: string; reason: string; used?: number; limit?: number; scope?: string };

/** The budget guard as the invokers see it. */
export interface GovernanceBudget {
  beforeLlmCall(estimatedTokens: number, signal?: AbortSignal): Promise<GovernanceBudgetDecision>;
  recordUsage(totalTokens: number): void;
  beforeToolCall(toolName: string, signal?: AbortSignal): Promise<GovernanceBudgetDecision>;
}

/** One session's governance: policy, confirmation, hooks, budget and output sanitisation. */
export interface SessionGovernance {
  readonly permission: PermissionPolicy;
  /** The operator's policy bounding `permission` (the stricter verdict wins), when the creator lacked host_direct. */
  readonly permissionFloor?: PermissionPolicy;
  /**
   * Agent bounds on both, outermost first (the stricter verdict wins): the session's agent's permissions, and
   * for a child session its parent's bounds, then the delegated agent's or the skill's.
   */
  /**
   * The operator's policy an "allow always" answer without host_direct may not grant past: the floor when the
   * session has one, the operator's policy itself when the session runs under it; absent when a host_direct
   * creator chose the session's own policy.
   */
  readonly grantFloor?: PermissionPolicy;
  readonly agentPermissions?: readonly PermissionPolicy[];
  /** A child run's answer to calls its policy asks about: deny them, or approve them without asking (absent: ask). */
  readonly onAsk?: 'deny' | 'approve';
  readonly confirmation: ConfirmationPolicy;
  readonly broker: ConfirmationBroker;
  /** Questions the agent asks its user (ask_user); absent in delegated runs, which have no user to ask. */
  readonly questions?: QuestionBroker;
  readonly redactor: SecretRedactor;
  readonly hooks?: GovernanceHooks;
  readonly budget?: GovernanceBudget;
  /** The session's identity labels, carried into hook payloads. */
  readonly labels?: Readonly<Record<string, string | undefined>>;
  /** Hook point for active-skill restrictions: a reason when the tool may not run now (given the call's origin). */
  restrictTool?(toolName: string, origin?: string): string | undefined;
}

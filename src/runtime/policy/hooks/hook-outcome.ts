import type { HookAction, HookEvent } from '../../../protocol/hooks.js';
import type { HostBridgeFailure } from '../host-bridge/host-bridge-error.js';

/** A hook that failed: unreachable, timed out, answered badly, or (observing) dropped for a full backlog. */
export interface HookFailure {
  hookId: string;
  event: HookEvent;
  failure: HostBridgeFailure | 'invalid_response' | 'dropped';
  message: string;
}

/** One hook that ran during a gate: what it answered (or `failed`) and how long it took. */
export interface HookExecution {
  hookId: string;
  action: HookAction | 'failed';
  durationMs: number;
  reason?: string;
}

/**
 * What the gating hooks of one event decided.
 * - `continue`: go on; `modifiedArgs` (pre_tool_use, permission_request) replaces the arguments and must be
 *   re-validated by the caller; `modifiedPayload` (pre_prompt) is the payload with hook fields merged in.
 * - `block`: refuse; `failed` is true when the block came from a hook that errored or timed out (fail closed).
 * - `skip`, `retry`: a hook stopped the chain; the caller decides what they mean for its operation.
 */
export interface HookOutcome {
  action: HookAction;
  reason?: string;
  hookId?: string;
  modifiedArgs?: Record<string, unknown>;
  modifiedPayload?: Record<string, unknown>;
  failed?: boolean;
  executions: HookExecution[];
}

/** Where matchers look: the tool, its arguments and the session. */
export interface HookMatchInput {
  toolName?: string;
  args?: unknown;
  sessionId: string;
  /** The skill the event is about (skill_load, skill_unload). */
  skill?: string;
}

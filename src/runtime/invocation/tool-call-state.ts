import type { WorkspaceAccess } from '../workspace/workspace-directory.js';
import type { FileOwner } from '../workspace/workspace-files.js';
import type { ToolErrorKind } from '../../protocol/seed-event-payloads.js';
import type { ConfirmationInheritance } from '../../protocol/subagent-task.js';
import type { AnyToolDefinition, ToolResult } from '../tools/define-tool.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { SessionGovernance } from '../policy/session-governance.js';
import type { InvocationContext } from './invocation-context.js';
import type { CommandLauncher } from '../sandbox/sandbox.js';
import type { WebAccess } from '../web/web-access.js';
import type { Delegation, ToolImages } from '../tools/define-tool.js';
import type { SessionQueue } from '../queue/session-queue.js';
import type { CallSubjects } from '../policy/permission-subjects.js';

/**
 * Where a tool call came from. `model`: the LLM. `nested`: inside a model-owned batch/program (governed
 * again). `host_direct`: the trusted control plane (skips permission and confirmation only).
 * `governed_direct`: a host call with full policy and confirmation.
 */
export type ToolOrigin = 'model' | 'nested' | 'host_direct' | 'governed_direct';

/** One tool call to govern and run. */
export interface ToolCallRequest {
  id: string;
  name: string;
  /** Raw JSON text from the model, or an already-structured value from the host. */
  args: string | unknown;
  origin: ToolOrigin;
  /** Orchestrators this call is nested in, outermost first (recursion protection). */
  chain?: readonly ('batch' | 'program')[];
  parentToolId?: string;
  /** A host-direct task's confirmationInheritance (POST .../tasks); ignored for other origins. */
  confirmationInheritance?: ConfirmationInheritance;
}

/** Services the invoker needs from its session. */
export interface ToolInvokerDeps {
  governance: SessionGovernance;
  /** Keeps a cut result's full output; undefined when it is larger than the session's artifact byte bound. */
  storeArtifact(content: string, toolCallId: string, toolName: string): string | undefined;
  /** Told about every executed call (after sanitisation), e.g. to attach a verification report to a preset command. */
  afterExecute?(
    call: ToolCallRequest,
    args: unknown,
    result: ToolResult,
    startedAtMs: number,
    ctx: InvocationContext,
  ): void;
  /** The session's pinned workspace: each call's `ctx.files` takes a lease of it (and returns it when the call settles). */
  workspace: WorkspaceAccess;
  /** Owner of files and directories the file tools create (sandbox.run_as when the server runs as root). */
  fileOwner?: FileOwner;
  /** Where the session's commands run, decided per call origin (tools get it as `ctx.commands`). */
  commands?: { forOrigin(origin: ToolOrigin): CommandLauncher };
  /** The session's web access, handed to the tools as `ctx.web` (web_fetch, web_search). */
  web?: WebAccess;
  /** The session's child runs, handed to the delegating tools (absent: they answer that delegation is off). */
  delegation?: Delegation;
  /** Where the model's own calls put the images they return (`ctx.images`; absent: read returns none). */
  images?: ToolImages;
  /** The session's lane queue (SessionOptions.queueConfig); absent for an ordinary session. */
  queue?: SessionQueue;
  /**
   * The session's change capture: a call that may change files waits for its run's base tree (docs/changes.md), and
   * says when it has ended (the span a rollback counts as the run's own changes).
   */
  changes?: { beforeMutation(runId: string): Promise<void>; afterMutation(runId: string): void };
}

/** The call as it moves through the pipeline stages. */
export interface ToolCallState {
  readonly call: ToolCallRequest;
  readonly ctx: InvocationContext;
  readonly deps: ToolInvokerDeps;
  /** The session's tools as they were when the call started (MCP and skills may change them between calls). */
  readonly registry: ToolRegistry;
  tool: AnyToolDefinition | undefined;
  /** Validated arguments (after validation; hooks may replace them with re-validated ones). */
  args: unknown;
  /** Set by the permission stage when the call needs human confirmation: the rule that asked. */
  askRule?: string;
  /** Set by the change capture stage when the call may change files: its end is reported (afterMutation). */
  mutating?: boolean;
  /** The call's permission subjects, made once by the permission stage (callSubjects) and reused after it. */
  subjects?: CallSubjects;
}

/** A stage either lets the call go on or stops it with the result the caller sees. */
export type StageVerdict = { kind: 'continue' } | { kind: 'stop'; result: ToolResult; malformedArgs?: boolean };

/** A pipeline stage. */
export type ToolStage = (state: ToolCallState) => Promise<StageVerdict>;

/** Shorthand for letting the call go on. */
export const CONTINUE: StageVerdict = { kind: 'continue' };

/** Shorthand for stopping the call with an error result (exit code 1) the model sees. */
export function stopWith(
  output: string,
  metadata?: Record<string, unknown>,
  malformedArgs = false,
  errorKind?: ToolErrorKind,
): StageVerdict {
  return {
    kind: 'stop',
    result: { output, exitCode: 1, ...(metadata ? { metadata } : {}), ...(errorKind ? { errorKind } : {}) },
    malformedArgs,
  };
}

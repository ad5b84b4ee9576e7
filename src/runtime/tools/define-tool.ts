import type { AttachmentRef } from '../../protocol/attachments.js';
import type { ToolErrorKind } from '../../protocol/seed-event-payloads.js';
import type {
  ConfirmationInheritance,
  ParallelTaskParams,
  SkillCallParams,
  TaskParams,
} from '../../protocol/subagent-task.js';
import { readFileSync } from 'node:fs';
import type { CommandLauncher } from '../sandbox/sandbox.js';
import type { WorkspaceFiles } from '../workspace/workspace-files.js';
import type { WebAccess } from '../web/web-access.js';
import type { z } from 'zod';
import type { PermissionPath } from '../policy/permission-subjects.js';
import type { QuestionOutcome, QuestionText } from '../policy/question-broker.js';

/** What a tool gets from the tool invoker: confinement root, cancellation and an output sink. */
export interface ToolContext {
  /** Canonical (realpath) workspace directory, for display and for what commands see; never open paths under it by name. */
  readonly workspace: string;
  /**
   * The only way a tool touches workspace files: every path is walked from the pinned workspace descriptor
   * (symlinks resolved by hand, never out), so a name swapped meanwhile cannot lead elsewhere.
   */
  readonly files: WorkspaceFiles;
  /** Aborted on run cancel, session close or tool timeout; tools must stop promptly. */
  readonly signal: AbortSignal;
  readonly sessionId: string;
  readonly runId?: string;
  readonly toolCallId: string;
  /** Streams partial output (e.g. bash lines) to subscribers as tool_output_delta events. */
  onOutput(delta: string): void;
  /**
   * Only for the built-in orchestrators (batch, program): runs child calls through the one tool
   * invoker. Children of a model-owned orchestrator are governed again; only an explicit host-direct
   * call makes its children trusted.
   */
  readonly nested?: NestedInvoker;
  /** Starts the commands the tool runs (bash, git) in the session's sandbox; absent only in hand-built contexts. */
  readonly commands?: CommandLauncher;
  /** The session's web settings and address checks, for web_fetch and web_search; absent only in hand-built contexts. */
  readonly web?: WebAccess;
  /** Only for the delegating tools (task, parallel_task, Skill): the session's child runs. */
  readonly delegation?: Delegation;
  /**
   * Only for ask_user: asks the session's user a question and waits for the answer, its timeout or a cancel.
   * Absent where nobody can answer (a delegated run).
   */
  readonly questions?: UserQuestions;
  /** The run's own signal (the call's `signal` also ends with the call); set for the delegating tools. */
  readonly runSignal?: AbortSignal;
  /** A host-direct caller's confirmationInheritance for the children of this call (delegating tools only). */
  readonly confirmationInheritance?: ConfirmationInheritance;
  /**
   * Where a tool puts an image it returns to the model (read of a png, jpeg, gif or webp). Set only for the
   * model's own calls (not inside batch or program, not for host calls): only they answer into the transcript.
   */
  readonly images?: ToolImages;
}

/** How a tool returns an image to the model (ToolContext.images): stored in the session's attachment store. */
export interface ToolImages {
  /** The session's current model takes images (its model block's modalities.input has "image"). */
  readonly accepted: boolean;
  /** The largest image, limits.maxAttachmentBytes. */
  readonly maxBytes: number;
  /** Store the image (checked bytes) as an attachment of the session; throws the store's CodeError (count, quota). */
  store(mediaType: string, name: string, data: Buffer): Promise<AttachmentRef>;
}

/** How a tool asks the session's user (ToolContext.questions). */
export interface UserQuestions {
  /** Ask and wait: the answer (free text or one of the options), or why there is none. */
  ask(question: QuestionText): Promise<QuestionOutcome>;
}

/** The result of one child call made by an orchestrator. */
export interface NestedCallResult extends ToolResult {
  readonly id: string;
  readonly name: string;
  readonly truncated: boolean;
}

/** The scoped invoker an orchestrator tool receives. */
export interface NestedInvoker {
  /** Run one child call through the full pipeline (validation, hooks, policy, budget, confirmation, timeout, sanitisation). */
  call(name: string, args: unknown, id?: string): Promise<NestedCallResult>;
  /**
   * What the orchestrator may know about a tool before calling it (read-only for these arguments when
   * given, else for every call); undefined when unknown.
   */
  describe(name: string, args?: unknown): { readOnly: boolean } | undefined;
}

/** What a tool returns. Faults the model should see are results with exitCode != 0, not exceptions. */
export interface ToolResult {
  output: string;
  exitCode: number;
  metadata?: Record<string, unknown>;
  /** Why the call failed, in the seed's ToolErrorKind (carried by `tool_end.error_kind`). */
  errorKind?: ToolErrorKind;
  /**
   * Images the result returns (the seed's ToolOutput `images`), as references in the session's attachment
   * store: the tool message says so in text, and the images follow in a user message.
   */
  images?: AttachmentRef[];
}

/** A tool: name, model-facing description, zod parameter schema (strict) and an executor. */
export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description: string;
  readonly parameters: S;
  /** True for tools whose every call leaves the workspace and the host unchanged (safe to run concurrently). */
  readonly readOnly: boolean;
  /**
   * Per-call read-only decision for tools whose mutating depends on the arguments (git: status is
   * read-only, checkout is not). Gets unvalidated arguments and must answer false when unsure.
   */
  readonly readOnlyFor?: (args: unknown) => boolean;
  /**
   * The workspace paths a call reads or changes, as its (validated) arguments give them: permission rules
   * match them normalized (see CallSubjects). Absent: rules see only the seed's argument string.
   */
  readonly permissionPaths?: (args: z.infer<S>) => readonly PermissionPath[];
  /**
   * The JSON schema shown to the model when it is not derived from `parameters` (MCP tools present their
   * servers' schemas as given; their `parameters` accept any object and the server validates).
   */
  readonly jsonSchema?: Record<string, unknown>;
  /** Set only on the built-in orchestrators; they receive `ctx.nested`. */
  readonly orchestrator?: 'batch' | 'program';
  /**
   * Set only on the delegating tools: they receive `ctx.delegation` and run without the toolTimeoutMs timer
   * (a child run is bounded by its own limits, the run's deadline and parallel_task's timeout_ms).
   */
  readonly delegates?: true;
  /**
   * Set only on ask_user: it receives `ctx.questions` and runs without the toolTimeoutMs timer (the question's own
   * timeout, the confirmation policy's, bounds the wait).
   */
  readonly asksUser?: true;
  execute(args: z.infer<S>, ctx: ToolContext): Promise<ToolResult>;
}

/** A tool of any parameter schema, as kept in the registry. */
// The registry stores tools of heterogeneous schemas; execute() is always called with schema-parsed args.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyToolDefinition = ToolDefinition<any>;

/** Declare a tool (identity helper that keeps the schema and executor types linked). */
export function defineTool<S extends z.ZodType>(tool: ToolDefinition<S>): ToolDefinition<S> {
  return tool;
}

/** True when this call of the tool is read-only: its per-call decision when it has one and args are known, else its static flag. */
export function isReadOnlyCall(tool: AnyToolDefinition, args?: unknown): boolean {
  if (tool.readOnly) return true;
  return tool.readOnlyFor !== undefined && args !== undefined && tool.readOnlyFor(args);
}

/** Read model-facing prose that lives beside the tool's code (e.g. `read.md` next to `read.ts`). */
export function loadPrompt(moduleUrl: string, fileName: string): string {
  return readFileSync(new URL(`./${fileName}`, moduleUrl), 'utf8').trim();
}

/** A tool error result (exit code 1) with a message the model can act on. */
export function toolError(message: string, metadata?: Record<string, unknown>): ToolResult {
  return metadata ? { output: message, exitCode: 1, metadata } : { output: message, exitCode: 1 };
}

/** The delegating call as the session's delegation sees it. */
export interface DelegationCall {
  /** The tool call's signal (its end, the run's cancel, the session's close). */
  readonly signal: AbortSignal;
  /** The run's signal: a background task outlives the call but is still cancelled with the run. */
  readonly runSignal: AbortSignal;
  readonly runId: string | undefined;
  readonly toolCallId: string;
  /** A host-direct caller's choice for the children's asks (absent: the server's default). */
  readonly inheritance?: ConfirmationInheritance | undefined;
}

/**
 * What the delegating tools (`task`, `parallel_task`, `Skill`) receive as `ctx.delegation`: the session's
 * child runs. Faults the model should see come back as results with exitCode != 0.
 */
export interface Delegation {
  task(params: TaskParams, call: DelegationCall): Promise<ToolResult>;
  parallelTask(params: ParallelTaskParams, call: DelegationCall): Promise<ToolResult>;
  skill(params: SkillCallParams, call: DelegationCall): Promise<ToolResult>;
}

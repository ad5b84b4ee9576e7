import { isReadOnlyCall, type NestedCallResult, type NestedInvoker, type ToolResult } from '../tools/define-tool.js';
import type { AttachmentRef } from '../../protocol/attachments.js';
import type { ToolErrorKind } from '../../protocol/seed-event-payloads.js';
import type { InvocationContext } from './invocation-context.js';
import { capOutput } from './output-cap.js';
import { budget } from './stages/budget.js';
import { changeCapture } from './stages/change-capture.js';
import { confirmation } from './stages/confirmation.js';
import { execute } from './stages/execute.js';
import { laneAdmission } from './stages/lane-admission.js';
import { permission } from './stages/permission.js';
import { postToolHooks } from './stages/post-tool-hooks.js';
import { preToolHooks } from './stages/pre-tool-hooks.js';
import { sanitizeOutput } from './stages/sanitize-output.js';
import { skillRestriction } from './stages/skill-restriction.js';
import { validateArgs } from './stages/validate-args.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { ToolCallRequest, ToolCallState, ToolInvokerDeps, ToolOrigin, ToolStage } from './tool-call-state.js';

/** The outcome of a tool call as the model (or host) sees it. */
export interface ToolCallOutcome {
  output: string;
  exitCode: number;
  truncated: boolean;
  artifactId?: string;
  durationMs: number;
  /** True when the arguments could not be parsed (counts toward maxParseRetries). */
  malformedArgs: boolean;
  metadata?: Record<string, unknown>;
  /** Why the call failed, in the seed's ToolErrorKind (batch reports it per item). */
  errorKind?: ToolErrorKind;
  /** Images the result returns (references in the session's attachment store), for the user message after the tool results. */
  images?: AttachmentRef[];
}

/** The gating stages, in pipeline order, before execution. */
const GATES: readonly ToolStage[] = [
  validateArgs,
  skillRestriction,
  preToolHooks,
  permission,
  budget,
  confirmation,
  changeCapture,
];

/**
 * The one tool invoker: every tool call, whatever its origin, goes through validate -> skill restriction
 * -> pre_tool_use hooks -> permission -> budget -> confirmation -> change capture (the run's base tree before
 * its first call that may change files) -> lane admission (sessions with a lane queue) -> execute (timeout, cancellation) ->
 * output sanitisation -> post_tool_use hooks -> output cap (full output kept as an artifact) -> events.
 * Host-direct calls skip only the permission and confirmation decisions.
 */
export class ToolInvoker {
  constructor(
    private readonly deps: ToolInvokerDeps,
    /** The session's current tools, read once per call. */
    private readonly registry: () => ToolRegistry,
  ) {}

  /** True when the session's tool of this name asks the user and waits (ask_user): the loop checkpoints before it. */
  asksUser(name: string): boolean {
    return this.registry().get(name)?.asksUser === true;
  }

  /** Run one tool call; never throws for tool faults (they become error results). */
  async invoke(call: ToolCallRequest, ctx: InvocationContext): Promise<ToolCallOutcome> {
    if (ctx.trace === undefined) return this.invokeStages(call, ctx);
    // Traced: a span per call (`execute_tool <name>`) with its outcome, its arguments and output only with capture_content.
    const span = ctx.trace.child(`execute_tool ${call.name}`, {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': call.name,
      'gen_ai.tool.call.id': call.id,
      'a3s.tool.origin': call.origin,
    });
    try {
      // The call's span is the active one while it runs: its sandboxed commands and Redis round trips are children.
      const outcome = await span.within(() => this.invokeStages(call, ctx));
      const failed = outcome.exitCode !== 0;
      // The kind's type only (a structured kind carries paths and messages).
      const kind = outcome.errorKind;
      const kindName = kind === undefined ? undefined : typeof kind === 'string' ? kind : kind.type;
      span.setAttributes({
        'a3s.tool.exit_code': outcome.exitCode,
        'a3s.tool.outcome': kindName ?? (failed ? 'error' : 'ok'),
        'a3s.tool.truncated': outcome.truncated,
      });
      // telemetry.capture_content only, redacted: the model's arguments and what the model was answered.
      span.setContent({ 'gen_ai.tool.call.arguments': call.args, 'gen_ai.tool.call.result': outcome.output });
      if (failed) span.fail(kindName ?? `exit code ${outcome.exitCode}`);
      return outcome;
    } finally {
      span.end();
    }
  }

  private async invokeStages(call: ToolCallRequest, ctx: InvocationContext): Promise<ToolCallOutcome> {
    const started = ctx.hostEnv.now();
    const state: ToolCallState = {
      call,
      ctx,
      deps: this.deps,
      registry: this.registry(),
      tool: undefined,
      args: undefined,
    };
    for (const stage of GATES) {
      const verdict = await stage(state);
      if (verdict.kind === 'stop') return this.finish(state, started, verdict.result, verdict.malformedArgs ?? false);
    }
    const announce = (): void =>
      ctx.emit('tool_execution_start', {
        id: call.id,
        name: state.tool?.name ?? call.name,
        args: state.args,
        origin: call.origin,
        ...(call.parentToolId ? { parent_tool_id: call.parentToolId } : {}),
      });
    let raw;
    try {
      raw = await laneAdmission(state, announce, (bound) => execute(state, this.nestedInvoker(state), bound));
    } finally {
      if (state.mutating) this.deps.changes?.afterMutation(ctx.runId);
    }
    const result = sanitizeOutput(state, raw);
    postToolHooks(state, result);
    this.deps.afterExecute?.(call, state.args, result, started, ctx);
    return this.finish(state, started, result, false);
  }

  /** The scoped invoker handed only to the built-in orchestrators; children are governed unless the parent was host-direct. */
  private nestedInvoker(state: ToolCallState): NestedInvoker | undefined {
    const orchestrator = state.tool?.orchestrator;
    if (!orchestrator) return undefined;
    const { call, ctx } = state;
    // Only an explicit host-direct call makes its children trusted; everything else is governed again.
    const childOrigin: ToolOrigin = call.origin === 'host_direct' ? 'host_direct' : 'nested';
    const chain = [...(call.chain ?? []), orchestrator];
    let seq = 0;
    return {
      call: async (name: string, args: unknown, id?: string): Promise<NestedCallResult> => {
        seq += 1;
        const childId = `${call.id}.${id ?? seq}`;
        const outcome = await this.invoke(
          { id: childId, name, args, origin: childOrigin, chain, parentToolId: call.id },
          ctx,
        );
        return {
          id: childId,
          name,
          output: outcome.output,
          exitCode: outcome.exitCode,
          truncated: outcome.truncated,
          ...(outcome.metadata ? { metadata: outcome.metadata } : {}),
          ...(outcome.errorKind ? { errorKind: outcome.errorKind } : {}),
        };
      },
      describe: (name: string, args?: unknown) => {
        const tool = this.registry().get(name);
        return tool ? { readOnly: isReadOnlyCall(tool, args) } : undefined;
      },
    };
  }

  private finish(state: ToolCallState, started: number, result: ToolResult, malformedArgs: boolean): ToolCallOutcome {
    const { call, ctx } = state;
    const limit = ctx.governance.toolOutputBytes;
    const capped = capOutput(result.output, limit);
    let artifactId: string | undefined;
    let output = capped.text;
    if (capped.truncated) {
      artifactId = this.deps.storeArtifact(result.output, call.id, call.name);
      output += artifactId
        ? `\n[output truncated at ${limit} bytes of ${capped.totalBytes}; full output stored as artifact ${artifactId}]`
        : `\n[output truncated at ${limit} bytes of ${capped.totalBytes}; the full output is larger than limits.maxArtifactBytesPerSession and was not kept]`;
    }
    const durationMs = Math.max(0, ctx.hostEnv.now() - started);
    ctx.emit('tool_end', {
      id: call.id,
      name: call.name,
      output,
      exit_code: result.exitCode,
      ...(result.metadata ? { metadata: result.metadata } : {}),
      ...(result.errorKind ? { error_kind: result.errorKind } : {}),
      duration_ms: durationMs,
      truncated: capped.truncated,
      ...(artifactId ? { artifact_id: artifactId } : {}),
    });
    return {
      output,
      exitCode: result.exitCode,
      truncated: capped.truncated,
      artifactId,
      durationMs,
      malformedArgs,
      metadata: result.metadata,
      ...(result.errorKind ? { errorKind: result.errorKind } : {}),
      ...(result.images && result.images.length > 0 && result.exitCode === 0 ? { images: result.images } : {}),
    };
  }
}

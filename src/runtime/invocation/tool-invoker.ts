import type { z } from 'zod';
import type { ToolResult } from '../tools/define-tool.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { InvocationContext } from './invocation-context.js';
import { capOutput } from './output-cap.js';
import { deadlineReason } from './run-deadline-error.js';

/** Where a tool call came from; host-direct calls come from a trusted control plane, not the model. */
export type ToolOrigin = 'model' | 'host_direct';

/** One tool call to govern and run. */
export interface ToolCallRequest {
  id: string;
  name: string;
  /** Raw JSON text from the model, or an already-structured value from the host. */
  args: string | unknown;
  origin: ToolOrigin;
}

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
}

/** Services the invoker needs from its session. */
export interface ToolInvokerDeps {
  registry: ToolRegistry;
  storeArtifact(content: string, toolCallId: string, toolName: string): string;
}

/**
 * The one tool invoker: every tool call, whatever its origin, goes through validate -> execute (with
 * the run's AbortSignal and a timeout) -> output cap (full output kept as an artifact) -> events.
 */
export class ToolInvoker {
  constructor(private readonly deps: ToolInvokerDeps) {}

  /** Run one tool call; never throws for tool faults (they become error results). */
  async invoke(call: ToolCallRequest, ctx: InvocationContext): Promise<ToolCallOutcome> {
    const started = ctx.hostEnv.now();
    const tool = this.deps.registry.get(call.name);
    if (!tool) return this.finish(call, ctx, started, { output: `Unknown tool "${call.name}". Available tools: ${this.deps.registry.list().map((t) => t.name).join(', ')}`, exitCode: 1 }, false);

    const parsed = parseArgs(call.args, tool.parameters);
    if (!parsed.ok) return this.finish(call, ctx, started, { output: `Invalid arguments for ${tool.name}: ${parsed.error}`, exitCode: 1 }, true);

    ctx.emit('tool_execution_start', { tool_id: call.id, tool_name: tool.name, args: parsed.value });
    if (ctx.signal.aborted) return this.finish(call, ctx, started, stoppedResult(tool.name, ctx.signal, 'before it started'), false);

    // One controller per call, aborted by the run's signal or the timeout. The run-signal listener is
    // removed when the call ends, so a long run does not accumulate a listener per call.
    const controller = new AbortController();
    let stop: (result: ToolResult) => void = () => undefined;
    const stopped = new Promise<ToolResult>((resolve) => {
      stop = resolve;
    });
    const onRunAbort = (): void => {
      controller.abort(ctx.signal.reason);
      stop(stoppedResult(tool.name, ctx.signal, 'while running'));
    };
    ctx.signal.addEventListener('abort', onRunAbort, { once: true });
    const timer = setTimeout(() => {
      controller.abort(new Error(`tool timeout (toolTimeoutMs ${ctx.governance.toolTimeoutMs})`));
      stop({ output: `Tool ${tool.name} timed out after ${ctx.governance.toolTimeoutMs} ms (toolTimeoutMs).`, exitCode: 1, metadata: { timed_out: true } });
    }, ctx.governance.toolTimeoutMs);
    // A tool abandoned on timeout or cancel may still print while it winds down; its output then
    // belongs to no call, and must not appear after the call's tool_end.
    let ended = false;
    let streamed = 0;
    const toolContext = {
      workspace: ctx.workspace,
      signal: controller.signal,
      sessionId: ctx.sessionId,
      runId: ctx.runId,
      toolCallId: call.id,
      onOutput: (delta: string): void => {
        if (ended || streamed >= ctx.governance.toolOutputBytes) return;
        // Streaming stops at the output cap: the full output is in the result (and its artifact).
        streamed += Buffer.byteLength(delta);
        ctx.emit('tool_output_delta', { tool_id: call.id, tool_name: tool.name, delta });
        if (streamed >= ctx.governance.toolOutputBytes) {
          ctx.emit('tool_output_delta', { tool_id: call.id, tool_name: tool.name, delta: `[live output stopped at ${ctx.governance.toolOutputBytes} bytes; the full output comes with the result]\n` });
        }
      },
    };
    const execution = (async () => tool.execute(parsed.value, toolContext))().catch(
      (error: unknown): ToolResult => ({ output: `Tool ${tool.name} failed: ${error instanceof Error ? error.message : String(error)}`, exitCode: 1 }),
    );
    let result: ToolResult;
    try {
      result = await Promise.race([execution, stopped]);
    } finally {
      ended = true;
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onRunAbort);
    }
    return this.finish(call, ctx, started, result, false);
  }

  private finish(call: ToolCallRequest, ctx: InvocationContext, started: number, result: ToolResult, malformedArgs: boolean): ToolCallOutcome {
    const capped = capOutput(result.output, ctx.governance.toolOutputBytes);
    let artifactId: string | undefined;
    let output = capped.text;
    if (capped.truncated) {
      artifactId = this.deps.storeArtifact(result.output, call.id, call.name);
      output += `\n[output truncated at ${ctx.governance.toolOutputBytes} bytes of ${capped.totalBytes}; full output stored as artifact ${artifactId}]`;
    }
    const durationMs = Math.max(0, ctx.hostEnv.now() - started);
    ctx.emit('tool_end', {
      tool_id: call.id,
      tool_name: call.name,
      output,
      exit_code: result.exitCode,
      duration_ms: durationMs,
      truncated: capped.truncated,
      ...(artifactId ? { artifact_id: artifactId } : {}),
    });
    return { output, exitCode: result.exitCode, truncated: capped.truncated, artifactId, durationMs, malformedArgs, metadata: result.metadata };
  }
}

type ParsedArgs = { ok: true; value: unknown } | { ok: false; error: string };

function parseArgs(raw: string | unknown, schema: z.ZodType): ParsedArgs {
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = raw.trim() === '' ? {} : JSON.parse(raw);
    } catch (error) {
      return { ok: false, error: `arguments are not valid JSON (${error instanceof Error ? error.message : String(error)})` };
    }
  }
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  const problems = result.error.issues.slice(0, 5).map((issue) => `${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`);
  return { ok: false, error: problems.join('; ') };
}

/** The result of a call stopped by the run's signal: the deadline names its limit, anything else is a cancel. */
function stoppedResult(toolName: string, signal: AbortSignal, when: string): ToolResult {
  const deadline = deadlineReason(signal);
  if (deadline) return { output: `Tool ${toolName} was stopped ${when}: ${deadline.message}.`, exitCode: 1, metadata: { timed_out: true, limit: 'maxExecutionTimeMs' } };
  return { output: `Tool ${toolName} was cancelled ${when}.`, exitCode: 1, metadata: { cancelled: true } };
}

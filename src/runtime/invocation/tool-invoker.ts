import type { z } from 'zod';
import type { ToolResult } from '../tools/define-tool.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { InvocationContext } from './invocation-context.js';
import { capOutput } from './output-cap.js';

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
    if (ctx.signal.aborted) return this.finish(call, ctx, started, { output: 'Tool call cancelled before it started.', exitCode: 1 }, false);

    const timeout = new AbortController();
    const signal = AbortSignal.any([ctx.signal, timeout.signal]);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<ToolResult>((resolve) => {
      timer = setTimeout(() => {
        timeout.abort(new Error('tool timeout'));
        resolve({ output: `Tool ${tool.name} timed out after ${ctx.governance.toolTimeoutMs} ms (toolTimeoutMs).`, exitCode: 1, metadata: { timed_out: true } });
      }, ctx.governance.toolTimeoutMs);
    });
    const cancelled = new Promise<ToolResult>((resolve) => {
      ctx.signal.addEventListener('abort', () => resolve({ output: `Tool ${tool.name} was cancelled.`, exitCode: 1, metadata: { cancelled: true } }), { once: true });
    });
    const execution = tool
      .execute(parsed.value, {
        workspace: ctx.workspace,
        signal,
        sessionId: ctx.sessionId,
        runId: ctx.runId,
        toolCallId: call.id,
        onOutput: (delta: string) => ctx.emit('tool_output_delta', { tool_id: call.id, tool_name: tool.name, delta }),
      })
      .catch((error: unknown): ToolResult => ({ output: `Tool ${tool.name} failed: ${error instanceof Error ? error.message : String(error)}`, exitCode: 1 }));
    try {
      const result = await Promise.race([execution, timedOut, cancelled]);
      return this.finish(call, ctx, started, result, false);
    } finally {
      clearTimeout(timer);
    }
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

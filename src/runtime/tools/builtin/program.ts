import { constants } from 'node:fs';
import { MAX_PROGRAM_SOURCE_BYTES, ProgramArgsSchema, type ProgramArgs } from '../../../protocol/program-args.js';
import { cutToBytes } from '../../program/program-log.js';
import {
  DEFAULT_PROGRAM_LIMITS,
  DELEGATING_PROGRAM_TIMEOUT_MS,
  type ProgramLimits,
} from '../../../protocol/program-limits.js';
import { MIN_PROGRAM_LOG_BYTES, type ProgramOutcome, type ProgramToolCaller } from '../../program/program-types.js';
import { runProgram } from '../../program/quickjs-sandbox.js';
import { defineTool, loadPrompt, toolError, type NestedInvoker, type ToolResult } from '../define-tool.js';
import { openRegularFile, readAt, type OpenedRegularFile } from '../../workspace/regular-file.js';
import { NotRegularFileError } from '../../workspace/not-regular-file-error.js';
import type { WorkspaceFiles } from '../../workspace/workspace-files.js';
import { existingPathErrorResult } from '../tool-file-helpers.js';

// Tool calls listed in the output (all of them are in metadata).
const LISTED_CALLS = 50;

/** The script's source, read through one handle of the confined walk that fstat said is a regular file of bounded size. */
async function loadScript(files: WorkspaceFiles, userPath: string): Promise<string | ToolResult> {
  if (!/\.m?js$/.test(userPath))
    return toolError('program script path must point to a .js or .mjs file', { reason: 'not_a_script' });
  let file: OpenedRegularFile | undefined;
  try {
    file = await openRegularFile(files, userPath, constants.O_RDONLY);
    const { size } = file.stats;
    // One byte past the bound: a file that grew since fstat is still refused.
    const source =
      size > MAX_PROGRAM_SOURCE_BYTES ? undefined : await readAt(file.handle, 0, MAX_PROGRAM_SOURCE_BYTES + 1);
    if (source === undefined || source.length > MAX_PROGRAM_SOURCE_BYTES) {
      return toolError(
        `script source is too large: ${Math.max(size, source?.length ?? 0)} bytes exceeds ${MAX_PROGRAM_SOURCE_BYTES} bytes`,
        { reason: 'too_large' },
      );
    }
    return source.toString('utf8');
  } catch (error) {
    if (error instanceof NotRegularFileError)
      return toolError(`${userPath} is not a regular file; path must name a script file.`, { reason: 'not_a_file' });
    return existingPathErrorResult(error, userPath);
  } finally {
    await file?.handle.close().catch(() => undefined);
  }
}

function prettyResult(value: unknown, maxBytes: number): string {
  const text = JSON.stringify(value, null, 2) ?? 'null';
  if (Buffer.byteLength(text) <= maxBytes) return text;
  return `${cutToBytes(text, maxBytes)}\n[result shown up to limits.maxOutputBytes (${maxBytes} bytes); the full value is in metadata.script_result]`;
}

function callList(outcome: ProgramOutcome): string {
  const lines = outcome.toolCalls
    .slice(0, LISTED_CALLS)
    .map(
      (call, i) =>
        `${i + 1}. ${call.name} (${call.success ? 'ok' : 'failed'}, exit_code=${call.exitCode}, output_bytes=${call.outputBytes})`,
    );
  if (outcome.toolCalls.length > LISTED_CALLS)
    lines.push(`... and ${outcome.toolCalls.length - LISTED_CALLS} more (see metadata.program.tool_calls)`);
  return [`Tool calls: ${outcome.toolCalls.length}`, ...lines].join('\n');
}

/** The seed's failure texts: timed out, cancelled by caller, script error, or failed. */
function failureHead(outcome: ProgramOutcome, limits: ProgramLimits): string {
  switch (outcome.failure) {
    case 'timeout':
      return `program script timed out after ${limits.timeoutMs} ms`;
    case 'cancelled':
      return 'program script cancelled by caller';
    case 'script':
    case 'tool_calls':
    case 'stalled':
      return `program script error:\n${outcome.error ?? 'unknown error'}`;
    default:
      return `program script failed: ${outcome.error ?? 'unknown error'}`;
  }
}

function describeOutcome(outcome: ProgramOutcome, limits: ProgramLimits): string {
  const parts: string[] = [];
  if (outcome.ok) {
    const result = outcome.result as { summary?: unknown } | null;
    const summary =
      result !== null && typeof result === 'object' && typeof result.summary === 'string' ? `\n${result.summary}` : '';
    parts.push(
      `Program script completed.${summary}`,
      callList(outcome),
      `Result:\n${prettyResult(outcome.result, Math.max(MIN_PROGRAM_LOG_BYTES, limits.maxOutputBytes))}`,
    );
  } else {
    parts.push(failureHead(outcome, limits));
    if (outcome.toolCalls.length > 0) parts.push(callList(outcome));
  }
  if (outcome.logs) parts.push(`Logs:\n${outcome.logs}`);
  return parts.join('\n\n');
}

function programMetadata(outcome: ProgramOutcome): Record<string, unknown> {
  const program = {
    name: 'script',
    language: 'javascript',
    runtime: 'embedded-quickjs',
    success: outcome.ok,
    tool_calls: outcome.toolCalls.map((call) => ({
      tool_name: call.name,
      success: call.success,
      exit_code: call.exitCode,
      output_bytes: call.outputBytes,
      metadata: call.metadata ?? null,
      args: call.args,
      duration_ms: call.durationMs,
    })),
    logs: outcome.logs,
    ...(outcome.ok ? {} : { error: outcome.error, failure: outcome.failure }),
  };
  return outcome.ok ? { program, script_result: outcome.result } : { program };
}

function callThrough(nested: NestedInvoker): ProgramToolCaller {
  return async (name, args) => {
    const result = await nested.call(name, args);
    return {
      name: result.name,
      output: result.output,
      exitCode: result.exitCode,
      truncated: result.truncated,
      ...(result.metadata ? { metadata: result.metadata } : {}),
    };
  };
}

function effectiveLimits(args: ProgramArgs, nested: NestedInvoker): ProgramLimits {
  // As in the seed: a script that may delegate (task) gets a far longer default timeout.
  const delegating = args.allowed_tools ? args.allowed_tools.includes('task') : nested.describe('task') !== undefined;
  return {
    ...DEFAULT_PROGRAM_LIMITS,
    timeoutMs:
      args.limits?.timeoutMs ?? (delegating ? DELEGATING_PROGRAM_TIMEOUT_MS : DEFAULT_PROGRAM_LIMITS.timeoutMs),
    ...(args.limits?.maxToolCalls !== undefined ? { maxToolCalls: args.limits.maxToolCalls } : {}),
    ...(args.limits?.maxOutputBytes !== undefined ? { maxOutputBytes: args.limits.maxOutputBytes } : {}),
  };
}

/**
 * The `program` tool (the seed's PTC script): runs a JavaScript `run(ctx, inputs)` in a bounded QuickJS
 * sandbox; the script's tool calls (ctx.read, ctx.grep, ctx.bash, ...) go through the scoped tool invoker
 * like any other call, and the result carries the seed's `metadata.program` and `metadata.script_result`.
 */
export const programTool = defineTool({
  name: 'program',
  description: loadPrompt(import.meta.url, 'program.md'),
  parameters: ProgramArgsSchema,
  readOnly: false,
  orchestrator: 'program',
  async execute(args, ctx): Promise<ToolResult> {
    if (!ctx.nested) return toolError('program needs the tool invoker', { reason: 'no_nested_invoker' });
    let source: string;
    if (args.path !== undefined) {
      const loaded = await loadScript(ctx.files, args.path);
      if (typeof loaded !== 'string') return loaded;
      source = loaded;
    } else if (args.source !== undefined) {
      source = args.source;
    } else {
      return toolError('program script requires either source or path', { reason: 'no_source' });
    }

    const effective = effectiveLimits(args, ctx.nested);
    const outcome = await runProgram({
      source,
      inputs: args.inputs ?? {},
      ...(args.allowed_tools ? { allowedTools: args.allowed_tools } : {}),
      limits: effective,
      callTool: callThrough(ctx.nested),
      signal: ctx.signal,
    });
    return {
      output: describeOutcome(outcome, effective),
      exitCode: outcome.ok ? 0 : 1,
      metadata: programMetadata(outcome),
    };
  },
});

import { readFile, stat } from 'node:fs/promises';
import { MAX_PROGRAM_SOURCE_BYTES, ProgramArgsSchema } from '../../../protocol/program-args.js';
import { cutToBytes } from '../../program/program-log.js';
import { DEFAULT_PROGRAM_LIMITS, type ProgramLimits, type ProgramOutcome, type ProgramToolCaller } from '../../program/program-types.js';
import { runProgram } from '../../program/quickjs-sandbox.js';
import { defineTool, loadPrompt, toolError, type NestedInvoker, type ToolResult } from '../define-tool.js';
import { pathErrorResult } from '../tool-file-helpers.js';
import { resolveInWorkspace } from '../workspace-path.js';

// Tool calls listed in the output of a failed program (all of them are in metadata).
const LISTED_CALLS = 20;

async function loadScript(workspace: string, userPath: string): Promise<string | ToolResult> {
  try {
    const absPath = await resolveInWorkspace(workspace, userPath, { mustExist: true });
    const stats = await stat(absPath);
    if (!stats.isFile()) return toolError(`${userPath} is not a regular file; path must name a script file.`, { reason: 'not_a_file' });
    if (stats.size > MAX_PROGRAM_SOURCE_BYTES) {
      return toolError(`${userPath} is ${stats.size} bytes; program scripts may be at most ${MAX_PROGRAM_SOURCE_BYTES} bytes.`, { reason: 'too_large' });
    }
    return await readFile(absPath, 'utf8');
  } catch (error) {
    return pathErrorResult(error, userPath);
  }
}

function prettyResult(value: unknown, maxBytes: number): string {
  const text = JSON.stringify(value, null, 2) ?? 'null';
  if (Buffer.byteLength(text) <= maxBytes) return text;
  return `${cutToBytes(text, maxBytes)}\n[result shown up to limits.maxOutputBytes (${maxBytes} bytes); the full value is in metadata.script_result]`;
}

function describeOutcome(outcome: ProgramOutcome, maxBytes: number): string {
  const parts: string[] = [];
  if (outcome.ok) {
    parts.push(prettyResult(outcome.result, maxBytes));
  } else {
    parts.push(`Program failed: ${outcome.error ?? 'unknown error'}`);
    if (outcome.toolCalls.length > 0) {
      const listed = outcome.toolCalls.slice(0, LISTED_CALLS).map((call) => `${call.name} (exit ${call.exitCode})`);
      const more = outcome.toolCalls.length > LISTED_CALLS ? `, and ${outcome.toolCalls.length - LISTED_CALLS} more` : '';
      parts.push(`Tool calls made: ${listed.join(', ')}${more}`);
    }
  }
  if (outcome.logs) parts.push(`Logs:\n${outcome.logs}`);
  return parts.join('\n\n');
}

function programMetadata(outcome: ProgramOutcome): Record<string, unknown> {
  const program = {
    tool_calls: outcome.toolCalls.map((call) => ({ name: call.name, args: call.args, exit_code: call.exitCode, duration_ms: call.durationMs })),
    logs: outcome.logs,
    ...(outcome.ok ? {} : { error: outcome.error, failure: outcome.failure }),
  };
  return outcome.ok ? { script_result: outcome.result, program } : { program };
}

function callThrough(nested: NestedInvoker): ProgramToolCaller {
  return async (name, args) => {
    const result = await nested.call(name, args);
    return { output: result.output, exitCode: result.exitCode, truncated: result.truncated, ...(result.metadata ? { metadata: result.metadata } : {}) };
  };
}

/**
 * The `program` tool: runs a model-written JavaScript script in a bounded QuickJS sandbox; the script's
 * tool calls (ctx.read, ctx.grep, ctx.bash, ...) go through the scoped tool invoker like any other call.
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
      const loaded = await loadScript(ctx.workspace, args.path);
      if (typeof loaded !== 'string') return loaded;
      source = loaded;
    } else if (args.source !== undefined) {
      source = args.source;
    } else {
      return toolError('give exactly one of source or path', { reason: 'no_source' });
    }

    const effective: ProgramLimits = {
      ...DEFAULT_PROGRAM_LIMITS,
      ...(args.limits?.timeoutMs !== undefined ? { timeoutMs: args.limits.timeoutMs } : {}),
      ...(args.limits?.maxToolCalls !== undefined ? { maxToolCalls: args.limits.maxToolCalls } : {}),
      ...(args.limits?.maxOutputBytes !== undefined ? { maxOutputBytes: args.limits.maxOutputBytes } : {}),
    };
    const outcome = await runProgram({
      source,
      inputs: args.inputs ?? null,
      ...(args.allowed_tools ? { allowedTools: args.allowed_tools } : {}),
      limits: effective,
      callTool: callThrough(ctx.nested),
      signal: ctx.signal,
    });
    return { output: describeOutcome(outcome, effective.maxOutputBytes), exitCode: outcome.ok ? 0 : 1, metadata: programMetadata(outcome) };
  },
});

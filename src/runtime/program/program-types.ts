import type { ProgramLimits } from '../../protocol/program-limits.js';
/** The console log and the JSON result are bounded by `maxOutputBytes`, but never below this. */
export const MIN_PROGRAM_LOG_BYTES = 1024;

/** Inclusive bounds `runProgram` accepts for each limit (the sandbox's native stack caps `stackBytes`). */
export const PROGRAM_LIMIT_BOUNDS: { readonly [K in keyof ProgramLimits]: readonly [min: number, max: number] } = {
  timeoutMs: [1, 600_000],
  maxToolCalls: [0, 1000],
  maxOutputBytes: [1, 4 * 1024 * 1024],
  memoryBytes: [4 * 1024 * 1024, 512 * 1024 * 1024],
  stackBytes: [64 * 1024, 2 * 1024 * 1024],
};

/** What a tool call made by a program resolves with inside the VM. */
export interface ProgramToolResult {
  /** The tool's name as the invoker reports it (defaults to the name called). */
  readonly name?: string;
  readonly output: string;
  readonly exitCode: number;
  readonly metadata?: Record<string, unknown>;
  /** True when the invoker cut the output (readFile then pages in smaller steps). */
  readonly truncated?: boolean;
}

/**
 * Runs one tool call for a program (in the server: the scoped nested invoker). `signal` aborts when the
 * program has ended, so a caller that can cancel children may stop ones still running.
 */
export type ProgramToolCaller = (name: string, args: unknown, signal: AbortSignal) => Promise<ProgramToolResult>;

/** Options of `runProgram`. */
export interface RunProgramOptions {
  /** Script text defining `async function run(ctx, inputs)`, a sync `function run`, or `export default` either. */
  readonly source: string;
  /** JSON-serialisable value handed to `run` as its second argument. */
  readonly inputs: unknown;
  /** When given, the only tool names the script may call (`readFile` needs `read`). */
  readonly allowedTools?: readonly string[];
  readonly limits: ProgramLimits;
  readonly callTool: ProgramToolCaller;
  /** Aborting stops the program at once (the outcome says it was cancelled). */
  readonly signal: AbortSignal;
  /** Clock for tool-call durations (default `Date.now`). */
  readonly now?: () => number;
}

/** One tool call a program made, in the order the calls were started. */
export interface ProgramToolCallRecord {
  readonly name: string;
  readonly args: unknown;
  /** The tool's exit code; -1 when the call had not finished when the program ended. */
  readonly exitCode: number;
  /** True when the call finished with exit code 0. */
  readonly success: boolean;
  /** UTF-8 bytes of the output handed to the script (after the `maxOutputBytes` cut). */
  readonly outputBytes: number;
  /** The tool result's metadata, if it had any. */
  readonly metadata?: Record<string, unknown>;
  readonly durationMs: number;
}

/** Why a program failed, for callers that branch on it (the message is in `error`). */
export type ProgramFailure =
  'script' | 'timeout' | 'memory' | 'stack' | 'tool_calls' | 'output' | 'cancelled' | 'stalled' | 'sandbox';

/** The result of one program run. */
export interface ProgramOutcome {
  readonly ok: boolean;
  /** The script's return value after a JSON round trip (`null` for `undefined`); set when ok. */
  readonly result?: unknown;
  /** What went wrong (message and trimmed stack); set when not ok. */
  readonly error?: string;
  /** Set when not ok. */
  readonly failure?: ProgramFailure;
  /** console output, one line per call, bounded by `limits.maxOutputBytes`. */
  readonly logs: string;
  readonly toolCalls: readonly ProgramToolCallRecord[];
}

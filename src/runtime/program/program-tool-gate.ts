import { cutToBytes } from './program-log.js';
import type { ProgramToolCallRecord, ProgramToolCaller, ProgramToolResult } from './program-types.js';

/** The exact refusal for a program that calls the program tool. */
export const RECURSIVE_PROGRAM_ERROR = 'recursive program calls are not allowed';

/** Orchestrators a script may never call, whatever `allowed_tools` says (as in the seed). */
const NEVER_IN_SCRIPTS: ReadonlySet<string> = new Set(['dynamic_workflow', 'parallel_task']);

/** Thrown (and surfaced inside the VM) when a program's tool call is refused before it runs. */
export class ProgramCallRefusedError extends Error {
  override readonly name = 'ProgramCallRefusedError';
}

/** Options of `ProgramToolGate`. */
export interface ProgramToolGateOptions {
  readonly allowedTools?: readonly string[];
  readonly maxToolCalls: number;
  /** Each tool output handed back to the script is cut to this many UTF-8 bytes. */
  readonly maxOutputBytes: number;
  readonly callTool: ProgramToolCaller;
  /** Aborted when the program ends; handed to `callTool`. */
  readonly signal: AbortSignal;
  readonly now: () => number;
}

interface LiveRecord {
  readonly name: string;
  readonly args: unknown;
  readonly startedAt: number;
  exitCode: number;
  outputBytes: number;
  metadata: Record<string, unknown> | undefined;
  durationMs: number | undefined;
}

/**
 * Every tool call of one program passes here: recursion, the allowed list and the call limit are checked
 * on the host side (the VM cannot bypass them), then the call is recorded and run through `callTool`,
 * and its output is cut to `maxOutputBytes` before the script sees it.
 */
export class ProgramToolGate {
  private readonly records: LiveRecord[] = [];
  private readonly allowed: ReadonlySet<string> | undefined;

  constructor(private readonly options: ProgramToolGateOptions) {
    this.allowed = options.allowedTools ? new Set(options.allowedTools) : undefined;
  }

  /** Check, record and run one call; refusals throw `ProgramCallRefusedError`, tool faults are results. */
  async call(name: string, args: unknown): Promise<ProgramToolResult> {
    this.admit(name, args);
    const record: LiveRecord = {
      name,
      args,
      startedAt: this.options.now(),
      exitCode: -1,
      outputBytes: 0,
      metadata: undefined,
      durationMs: undefined,
    };
    this.records.push(record);
    try {
      const result = await this.options.callTool(name, args, this.options.signal);
      const output = cutToBytes(result.output, this.options.maxOutputBytes);
      record.exitCode = result.exitCode;
      record.outputBytes = Buffer.byteLength(output);
      record.metadata = result.metadata;
      return output === result.output ? result : { ...result, output, truncated: true };
    } catch (error) {
      record.exitCode = 1;
      throw new Error(`tool "${name}" failed: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      record.durationMs = Math.max(0, this.options.now() - record.startedAt);
    }
  }

  /** The calls so far, in the order they started; unfinished ones have exit code -1. */
  snapshot(): ProgramToolCallRecord[] {
    const now = this.options.now();
    return this.records.map((record) => ({
      name: record.name,
      args: record.args,
      exitCode: record.exitCode,
      success: record.exitCode === 0,
      outputBytes: record.outputBytes,
      ...(record.metadata ? { metadata: record.metadata } : {}),
      durationMs: record.durationMs ?? Math.max(0, now - record.startedAt),
    }));
  }

  private admit(name: string, args: unknown): void {
    if (name === 'program') throw new ProgramCallRefusedError(RECURSIVE_PROGRAM_ERROR);
    if (NEVER_IN_SCRIPTS.has(name))
      throw new ProgramCallRefusedError(
        `tool '${name}' is not allowed for this PTC script; scripts never call ${name}`,
      );
    const tasks = (args as { tasks?: unknown } | null)?.tasks;
    if (name === 'task' && Array.isArray(tasks) && tasks.length > 1) {
      throw new ProgramCallRefusedError(
        `tool 'task' is not allowed for this PTC script with ${tasks.length} tasks; call task once per task`,
      );
    }
    if (this.allowed && !this.allowed.has(name)) {
      const list = this.allowed.size > 0 ? [...this.allowed].join(', ') : '(none)';
      throw new ProgramCallRefusedError(`tool '${name}' is not allowed for this PTC script; allowed tools: ${list}`);
    }
    if (this.records.length >= this.options.maxToolCalls) {
      throw new ProgramCallRefusedError(
        `PTC script exceeded maxToolCalls=${this.options.maxToolCalls} (limits.maxToolCalls); "${name}" was not called`,
      );
    }
  }
}

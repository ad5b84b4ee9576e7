import { DEFAULT_PROGRAM_LIMITS, type ProgramLimits } from '../../src/protocol/program-limits.js';
import type { ProgramOutcome, ProgramToolResult } from '../../src/runtime/program/program-types.js';
import { runProgram } from '../../src/runtime/program/quickjs-sandbox.js';

/** Small limits so that limit tests end quickly. */
export const TEST_LIMITS: ProgramLimits = { ...DEFAULT_PROGRAM_LIMITS, timeoutMs: 300, memoryBytes: 16 * 1024 * 1024 };

/** One call received by a fake tool caller. */
export interface RecordedCall {
  readonly name: string;
  readonly args: unknown;
}

/** A canned tool: answers from the arguments. */
export type CannedTool = (args: Record<string, unknown>) => ProgramToolResult | Promise<ProgramToolResult>;

/** Format lines the way the read tool does (`cat -n` style: number in 6 columns, a tab, the line). */
export function numbered(lines: readonly string[], first = 1): string {
  return lines.map((line, i) => `${String(first + i).padStart(6)}\t${line}`).join('\n');
}

/** A read tool over in-memory files, paging like the real one (`pageSize` lines per call). */
export function fakeRead(files: Record<string, string>, pageSize = 2000): CannedTool {
  return (args) => {
    const file = files[String(args.file_path)];
    if (file === undefined)
      return { output: `File not found: ${String(args.file_path)}`, exitCode: 1, metadata: { reason: 'not_found' } };
    if (file === '') return { output: '(File is empty.)', exitCode: 0, metadata: { lines: 0 } };
    const all = file.replace(/\n$/, '').split('\n');
    const offset = typeof args.offset === 'number' ? args.offset : 1;
    const page = all.slice(offset - 1, offset - 1 + pageSize);
    const last = offset + page.length - 1;
    const hasMore = last < all.length;
    const note = hasMore
      ? `\n\n(Showing lines ${offset}-${last}; the file has more lines. Call read with offset=${last + 1} to continue.)`
      : '';
    return {
      output: numbered(page, offset) + note,
      exitCode: 0,
      metadata: { start_line: offset, end_line: last, has_more: hasMore },
    };
  };
}

/** A fake `callTool` that records every call and answers from canned tools (unknown tools fail). */
export function fakeTools(tools: Record<string, CannedTool> = {}): {
  calls: RecordedCall[];
  callTool: (name: string, args: unknown) => Promise<ProgramToolResult>;
} {
  const calls: RecordedCall[] = [];
  return {
    calls,
    callTool: async (name, args) => {
      calls.push({ name, args });
      const tool = tools[name];
      if (!tool) return { output: `${name} ran with ${JSON.stringify(args)}`, exitCode: 0 };
      return tool((args ?? {}) as Record<string, unknown>);
    },
  };
}

/** Run a script with the test limits (overridable), a fake tool caller and a fresh signal. */
export function run(
  source: string,
  options: {
    inputs?: unknown;
    limits?: Partial<ProgramLimits>;
    allowedTools?: string[];
    tools?: Record<string, CannedTool>;
    signal?: AbortSignal;
  } = {},
): Promise<ProgramOutcome & { calls: RecordedCall[] }> {
  const fake = fakeTools(options.tools);
  return runProgram({
    source,
    inputs: options.inputs,
    limits: { ...TEST_LIMITS, ...options.limits },
    ...(options.allowedTools ? { allowedTools: options.allowedTools } : {}),
    callTool: fake.callTool,
    signal: options.signal ?? new AbortController().signal,
  }).then((outcome) => ({ ...outcome, calls: fake.calls }));
}

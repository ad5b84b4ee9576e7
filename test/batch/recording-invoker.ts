import { z } from 'zod';
import { batchTool } from '../../src/runtime/tools/builtin/batch.js';
import { bashTool } from '../../src/runtime/tools/builtin/bash.js';
import { editTool } from '../../src/runtime/tools/builtin/edit.js';
import { globTool } from '../../src/runtime/tools/builtin/glob.js';
import { grepTool } from '../../src/runtime/tools/builtin/grep.js';
import { readTool } from '../../src/runtime/tools/builtin/read.js';
import { writeTool } from '../../src/runtime/tools/builtin/write.js';
import {
  defineTool,
  isReadOnlyCall,
  type AnyToolDefinition,
  type NestedCallResult,
  type NestedInvoker,
  type ToolContext,
} from '../../src/runtime/tools/define-tool.js';

/** One child call as the recording invoker saw it. */
export interface RecordedCall {
  readonly id: string;
  readonly name: string;
  readonly args: unknown;
}

/** A NestedInvoker over real tools that records every call and the start/end order of calls. */
export interface RecordingInvoker extends NestedInvoker {
  /** Calls in the order they started. */
  readonly calls: RecordedCall[];
  /** `start:<id>` and `end:<id>` in the order they happened. */
  readonly events: string[];
  /** Highest number of calls in flight at once. */
  readonly maxInFlight: () => number;
}

/** Two-party rendezvous: `arrive()` resolves true once `parties` callers arrived, false on timeout. */
export interface Latch {
  arrive(timeoutMs: number): Promise<boolean>;
  readonly arrived: () => number;
}

/** Create a latch released only when `parties` callers are waiting on it at the same time. */
export function createLatch(parties: number): Latch {
  let count = 0;
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    arrived: () => count,
    async arrive(timeoutMs) {
      count += 1;
      if (count >= parties) release();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      try {
        return await Promise.race([released.then(() => true), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Test-local tools (read-only unless named otherwise) that make concurrency and binding observable. */
export function createTestTools(latch: Latch): AnyToolDefinition[] {
  const latchTool = defineTool({
    name: 'latch',
    description: 'Waits until enough callers are waiting at once.',
    parameters: z.object({ timeout_ms: z.number().int().default(2000) }).strict(),
    readOnly: true,
    async execute(args) {
      const ok = await latch.arrive(args.timeout_ms);
      return ok
        ? { output: 'released', exitCode: 0 }
        : { output: `latch timed out with ${latch.arrived()} arrived`, exitCode: 1 };
    },
  });
  const echoTool = defineTool({
    name: 'echo_args',
    description: 'Returns its arguments as JSON.',
    parameters: z.record(z.string(), z.unknown()),
    readOnly: true,
    async execute(args) {
      return { output: JSON.stringify(args), exitCode: 0, metadata: { keys: Object.keys(args) } };
    },
  });
  const sleepTool = defineTool({
    name: 'sleep',
    description: 'Waits a while without touching anything.',
    parameters: z.object({ ms: z.number().int().min(0) }).strict(),
    readOnly: true,
    async execute(args, ctx) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, args.ms);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      return ctx.signal.aborted
        ? { output: 'sleep was cancelled', exitCode: 1 }
        : { output: `slept ${args.ms} ms`, exitCode: 0 };
    },
  });
  const bigTool = defineTool({
    name: 'big',
    description: 'Prints many bytes.',
    parameters: z.object({ bytes: z.number().int().min(0) }).strict(),
    readOnly: true,
    async execute(args) {
      return { output: 'x'.repeat(args.bytes), exitCode: 0 };
    },
  });
  return [latchTool, echoTool, sleepTool, bigTool];
}

/** The real built-in tools the tests use, plus `batch` itself (so a nested batch is known to the invoker). */
export function realTools(): AnyToolDefinition[] {
  return [readTool, writeTool, editTool, globTool, grepTool, bashTool, batchTool];
}

/**
 * Build a recording NestedInvoker: validates args with each tool's schema and runs it with a child
 * context of `parent` (same workspace and signal), as the real invoker does for nested calls.
 */
export function createRecordingInvoker(
  tools: readonly AnyToolDefinition[],
  parent: () => ToolContext,
): RecordingInvoker {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const calls: RecordedCall[] = [];
  const events: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let counter = 0;
  return {
    calls,
    events,
    maxInFlight: () => maxInFlight,
    describe(name, args) {
      const tool = byName.get(name);
      return tool ? { readOnly: isReadOnlyCall(tool, args) } : undefined;
    },
    async call(name, args, id): Promise<NestedCallResult> {
      counter += 1;
      const callId = id ?? `child-${counter}`;
      calls.push({ id: callId, name, args });
      const tool = byName.get(name);
      if (!tool) return { id: callId, name, output: `Unknown tool "${name}"`, exitCode: 1, truncated: false };
      const parsed = tool.parameters.safeParse(args);
      if (!parsed.success) {
        const message = `Invalid arguments for ${name}: ${parsed.error.message}`;
        return {
          id: callId,
          name,
          output: message,
          exitCode: 1,
          truncated: false,
          errorKind: { type: 'invalid_argument', message },
        };
      }
      const ctx = parent();
      events.push(`start:${callId}`);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        const result = await tool.execute(parsed.data, { ...ctx, toolCallId: callId, nested: undefined });
        return {
          id: callId,
          name,
          output: result.output,
          exitCode: result.exitCode,
          truncated: false,
          ...(result.metadata ? { metadata: result.metadata } : {}),
          ...(result.errorKind ? { errorKind: result.errorKind } : {}),
        };
      } finally {
        inFlight -= 1;
        events.push(`end:${callId}`);
      }
    },
  };
}

import { readFileSync } from 'node:fs';
import type { z } from 'zod';

/** What a tool gets from the tool invoker: confinement root, cancellation and an output sink. */
export interface ToolContext {
  /** Canonical (realpath) workspace directory; every path the tool touches must stay inside it. */
  readonly workspace: string;
  /** Aborted on run cancel, session close or tool timeout; tools must stop promptly. */
  readonly signal: AbortSignal;
  readonly sessionId: string;
  readonly runId?: string;
  readonly toolCallId: string;
  /** Streams partial output (e.g. bash lines) to subscribers as tool_output_delta events. */
  onOutput(delta: string): void;
}

/** What a tool returns. Faults the model should see are results with exitCode != 0, not exceptions. */
export interface ToolResult {
  output: string;
  exitCode: number;
  metadata?: Record<string, unknown>;
}

/** A tool: name, model-facing description, zod parameter schema (strict) and an executor. */
export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description: string;
  readonly parameters: S;
  /** True for tools that never change the workspace or the host. */
  readonly readOnly: boolean;
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

/** Read model-facing prose that lives beside the tool's code (e.g. `read.md` next to `read.ts`). */
export function loadPrompt(moduleUrl: string, fileName: string): string {
  return readFileSync(new URL(`./${fileName}`, moduleUrl), 'utf8').trim();
}

/** A tool error result (exit code 1) with a message the model can act on. */
export function toolError(message: string, metadata?: Record<string, unknown>): ToolResult {
  return metadata ? { output: message, exitCode: 1, metadata } : { output: message, exitCode: 1 };
}

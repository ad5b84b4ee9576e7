import { z } from 'zod';
import { defineTool, loadPrompt, toolError, type ToolResult } from '../define-tool.js';
import { runBatch, type PlannedInvocation } from '../batch/batch-runner.js';
import { summarizeBatch } from '../batch/batch-summary.js';

/** Most invocations one batch may hold (the seed's bound). */
export const MAX_BATCH_INVOCATIONS = 32;
/** Highest step number an invocation may name. */
export const MAX_BATCH_STEP = 32;
/** Default bound on concurrently running items of an all-read-only step (the seed's default). */
export const DEFAULT_BATCH_CONCURRENCY = 8;
/** Highest allowed `max_concurrency`. */
export const MAX_BATCH_CONCURRENCY = 16;

const invocation = z
  .object({
    id: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'id must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-"')
      .optional()
      .describe(
        'Optional unique name of this invocation (1-64 of A-Z a-z 0-9 _ -); later steps reference its result as {"$ref": "<id>.output"}.',
      ),
    tool: z.string().min(1).describe('Required. Name of the tool to call, e.g. "read" or "grep".'),
    args: z
      .record(z.string(), z.unknown())
      .describe(
        'Required. Arguments for the tool (an object); any value may be {"$ref": "<id>.<path>"} to use a result of an earlier step.',
      ),
    step: z
      .number()
      .int()
      .min(1)
      .max(MAX_BATCH_STEP)
      .optional()
      .describe(
        `Step number 1-${MAX_BATCH_STEP} (default 1). Steps run in ascending order; invocations of one step run together.`,
      ),
  })
  .strict();

const parameters = z
  .object({
    invocations: z
      .array(invocation)
      .min(1)
      .max(MAX_BATCH_INVOCATIONS)
      .superRefine((items, ctx) => {
        const seen = new Set<string>();
        items.forEach((item, index) => {
          if (item.id === undefined) return;
          if (seen.has(item.id))
            ctx.addIssue({
              code: 'custom',
              message: `duplicate id "${item.id}"; every invocation needs its own id`,
              path: [index, 'id'],
            });
          seen.add(item.id);
        });
      })
      .describe(`Required. The tool calls to make (1-${MAX_BATCH_INVOCATIONS}), grouped into steps.`),
    max_concurrency: z
      .number()
      .int()
      .min(1)
      .max(MAX_BATCH_CONCURRENCY)
      .optional()
      .describe(
        `Most invocations of one read-only step running at once (1-${MAX_BATCH_CONCURRENCY}, default ${DEFAULT_BATCH_CONCURRENCY}).`,
      ),
  })
  .strict();

/**
 * The `batch` tool: several tool calls in one round, in ordered steps, with results of earlier steps
 * bound into later arguments by `$ref`; each child goes through the tool invoker again.
 */
export const batchTool = defineTool({
  name: 'batch',
  description: loadPrompt(import.meta.url, 'batch.md'),
  parameters,
  readOnly: false,
  orchestrator: 'batch',
  async execute(args, ctx): Promise<ToolResult> {
    if (!ctx.nested) return toolError('batch needs the tool invoker', { reason: 'no_nested_invoker' });
    const planned: PlannedInvocation[] = args.invocations.map((item, index) => ({
      index,
      ...(item.id !== undefined ? { id: item.id } : {}),
      tool: item.tool,
      args: item.args,
      step: item.step ?? 1,
    }));
    const requested = args.max_concurrency ?? DEFAULT_BATCH_CONCURRENCY;
    const run = await runBatch(planned, {
      nested: ctx.nested,
      signal: ctx.signal,
      maxConcurrency: requested,
      selfName: 'batch',
    });
    return summarizeBatch(run, requested);
  },
});

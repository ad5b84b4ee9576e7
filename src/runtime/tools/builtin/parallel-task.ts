import { z } from 'zod';
import { ParallelTaskModelViewSchema, ParallelTaskToolParamsSchema } from '../../../protocol/subagent-task.js';
import { defineTool, loadPrompt, type ToolResult } from '../define-tool.js';
import { delegationCall, noDelegation } from './task.js';

const ALIASES: Readonly<Record<string, string>> = {
  allowPartialFailure: 'allow_partial_failure',
  timeoutMs: 'timeout_ms',
  minSuccessCount: 'min_success_count',
};

/** The seed accepts camelCase aliases of the top-level fields. */
function normalise(input: unknown): unknown {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return input;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input))
    out[ALIASES[key] !== undefined && !(ALIASES[key] in input) ? ALIASES[key] : key] = value;
  return out;
}

/** `parallel_task`: run 2..32 tasks concurrently (the seed's partial-failure rules). */
export const parallelTaskTool = defineTool({
  name: 'parallel_task',
  description: loadPrompt(import.meta.url, 'parallel-task.md'),
  parameters: z.preprocess(normalise, ParallelTaskToolParamsSchema),
  jsonSchema: z.toJSONSchema(ParallelTaskModelViewSchema, { target: 'draft-7', io: 'input' }) as Record<
    string,
    unknown
  >,
  readOnly: false,
  delegates: true,
  execute(args, ctx): Promise<ToolResult> {
    return ctx.delegation
      ? ctx.delegation.parallelTask(args, delegationCall(ctx))
      : Promise.resolve(noDelegation('parallel_task'));
  },
});

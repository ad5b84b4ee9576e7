import { z } from 'zod';
import { TaskModelViewSchema, TaskToolParamsSchema } from '../../../protocol/subagent-task.js';
import { defineTool, loadPrompt, type ToolContext, type ToolResult } from '../define-tool.js';
import type { DelegationCall } from '../define-tool.js';

/** The delegating call of a tool context. */
export function delegationCall(ctx: ToolContext): DelegationCall {
  return {
    signal: ctx.signal,
    runSignal: ctx.runSignal ?? ctx.signal,
    runId: ctx.runId,
    toolCallId: ctx.toolCallId,
    inheritance: ctx.confirmationInheritance,
  };
}

/** The result of a delegating tool in a context without delegation (hand-built contexts). */
export function noDelegation(name: string): ToolResult {
  return {
    output: `Tool ${name} is not available here: this session cannot delegate.`,
    exitCode: 1,
    errorKind: { type: 'unsupported', message: `${name}: no delegation in this context` },
  };
}

/** `task`: delegate one task to a child agent (the seed's TaskParams). */
export const taskTool = defineTool({
  name: 'task',
  description: loadPrompt(import.meta.url, 'task.md'),
  parameters: TaskToolParamsSchema,
  jsonSchema: z.toJSONSchema(TaskModelViewSchema, { target: 'draft-7', io: 'input' }) as Record<string, unknown>,
  readOnly: false,
  delegates: true,
  execute(args, ctx): Promise<ToolResult> {
    return ctx.delegation ? ctx.delegation.task(args, delegationCall(ctx)) : Promise.resolve(noDelegation('task'));
  },
});

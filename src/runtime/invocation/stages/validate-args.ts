import type { z } from 'zod';
import { formatZodIssues } from '../../../protocol/format-zod-issues.js';
import { toolRequestBound } from '../../evidence/evidence-binding.js';
import { CONTINUE, stopWith, type ToolCallState, type StageVerdict } from '../tool-call-state.js';

/** Bounded orchestrator nesting (batch inside program, and so on). */
export const MAX_NESTING_DEPTH = 3;

type Parsed = { ok: true; value: unknown } | { ok: false; error: string };

/** Parse raw (JSON text) or structured arguments against a tool's strict zod schema. */
export function parseToolArgs(raw: string | unknown, schema: z.ZodType): Parsed {
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = raw.trim() === '' ? {} : JSON.parse(raw);
    } catch (error) {
      return {
        ok: false,
        error: `arguments are not valid JSON (${error instanceof Error ? error.message : String(error)})`,
      };
    }
  }
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, error: formatZodIssues(result.error, { max: 5 }) };
}

/** Stage 1: known tool, recursion protection, and arguments valid against the strict schema. */
export async function validateArgs(state: ToolCallState): Promise<StageVerdict> {
  const { call } = state;
  const tool = state.registry.get(call.name);
  if (!tool)
    return stopWith(
      `Unknown tool "${call.name}". Available tools: ${state.registry
        .list()
        .map((t) => t.name)
        .join(', ')}`,
    );
  state.tool = tool;
  const chain = call.chain ?? [];
  if (tool.orchestrator === 'program' && chain.includes('program'))
    return stopWith('recursive program calls are not allowed');
  if (tool.orchestrator === 'batch' && chain.includes('batch'))
    return stopWith('recursive batch calls are not allowed');
  if (chain.length >= MAX_NESTING_DEPTH)
    return stopWith(
      `nesting depth ${chain.length + 1} exceeds the limit of ${MAX_NESTING_DEPTH} nested orchestrator calls`,
    );
  const parsed = parseToolArgs(call.args, tool.parameters);
  if (!parsed.ok)
    return stopWith(`Invalid arguments for ${tool.name}: ${parsed.error}`, undefined, true, {
      type: 'invalid_argument',
      message: parsed.error,
    });
  state.args = parsed.value;
  state.ctx.emit('tool_request_bound', toolRequestBound(call.id, tool.name, call.origin, parsed.value));
  return CONTINUE;
}

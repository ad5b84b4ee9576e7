import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { ChatMessage } from '../../protocol/chat-message.js';
import { formatZodIssues } from '../../protocol/format-zod-issues.js';
import { addUsage, type Usage } from '../../protocol/run-record.js';
import type { InvocationContext } from '../invocation/invocation-context.js';
import type { LlmInvoker } from '../invocation/llm-invoker.js';
import { LlmProviderError } from '../llm/llm-provider.js';

/** The seed's bound on repair calls after a malformed structured answer. */
export const MAX_REPAIR_ATTEMPTS = 2;

const REPAIR_PROMPT = readFileSync(new URL('./prompts/repair.md', import.meta.url), 'utf8').trim();

/** One structured-output request: what to ask, and the zod schema the answer must satisfy. */
export interface StructuredRequest<T> {
  /** The schema's name as the provider sees it (`response_format.json_schema.name`). */
  name: string;
  description: string;
  system: string;
  prompt: string;
  schema: z.ZodType<T>;
  maxRepairAttempts?: number;
}

/** The answer: the parsed value, or why no valid answer came; `calls` and `usage` count every attempt. */
export type StructuredResult<T> =
  { ok: true; value: T; calls: number; usage: Usage } | { ok: false; error: string; calls: number; usage: Usage };

const jsonSchemas = new WeakMap<z.ZodType, Record<string, unknown>>();

function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  let json = jsonSchemas.get(schema);
  if (!json) {
    json = z.toJSONSchema(schema, { target: 'draft-7', io: 'input' }) as Record<string, unknown>;
    delete json.$schema;
    jsonSchemas.set(schema, json);
  }
  return json;
}

/** Parses a model's JSON answer leniently: a fenced block, or the outermost object in surrounding prose. */
export function parseLenientJson(text: string): unknown {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(trimmed);
  const body = fenced ? fenced[1] : trimmed;
  try {
    return JSON.parse(body);
  } catch {
    const start = body.indexOf('{');
    const end = body.lastIndexOf('}');
    if (start < 0 || end <= start) throw new Error('the answer holds no JSON object');
    return JSON.parse(body.slice(start, end + 1));
  }
}

/**
 * Ask the model for a JSON object through the run's LLM invoker (budget, usage, hooks and cancellation as
 * for a turn), with the JSON schema as the provider's `response_format` and in the prompt. A malformed or
 * invalid answer is sent back with its problems for at most `maxRepairAttempts` repair calls. A refused
 * call (budget, blocking hook) or a cancelled run throws; a provider failure is an answer that did not come.
 */
export async function generateStructured<T>(
  llm: LlmInvoker,
  ctx: InvocationContext,
  request: StructuredRequest<T>,
): Promise<StructuredResult<T>> {
  const schema = jsonSchemaOf(request.schema);
  const format = { name: request.name, description: request.description, schema };
  const messages: ChatMessage[] = [
    {
      role: 'system',
      content: `${request.system}\n\nAnswer with one JSON object and nothing else. Its JSON schema:\n${JSON.stringify(schema)}`,
    },
    { role: 'user', content: request.prompt },
  ];
  const usage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  const attempts = 1 + (request.maxRepairAttempts ?? MAX_REPAIR_ATTEMPTS);
  let error = '';
  let calls = 0;
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    let text: string;
    try {
      calls += 1;
      const answer = await llm.complete(messages, ctx, format);
      addUsage(usage, answer.usage);
      text = answer.text;
    } catch (failure) {
      if (ctx.signal.aborted || !(failure instanceof LlmProviderError)) throw failure;
      return { ok: false, error: `provider call failed: ${failure.message}`, calls, usage };
    }
    try {
      const parsed = request.schema.safeParse(parseLenientJson(text));
      if (parsed.success) return { ok: true, value: parsed.data, calls, usage };
      error = formatZodIssues(parsed.error, { max: 8 });
    } catch (failure) {
      error = failure instanceof Error ? failure.message : String(failure);
    }
    messages.push(
      { role: 'assistant', content: text },
      { role: 'user', content: REPAIR_PROMPT.replace('{problems}', error) },
    );
  }
  return { ok: false, error: `no valid ${request.name} after ${calls} calls: ${error}`, calls, usage };
}

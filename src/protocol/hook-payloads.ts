import { z } from 'zod';
import type { HookEvent } from './hooks.js';

const toolCall = { session_id: z.string(), tool: z.string(), args: z.record(z.string(), z.unknown()) };
const run = { session_id: z.string(), run_id: z.string() };
const usage = z.looseObject({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
});
const runResult = {
  ...run,
  response_text: z.string(),
  tool_calls_count: z.number().int(),
  usage,
  duration_ms: z.number().int(),
};
const skillEvent = {
  session_id: z.string(),
  skill_name: z.string(),
  skill_kind: z.string(),
  source: z.string(),
};

/**
 * Payloads sent for each event (the seed's shapes; extra fields allowed). Every request also carries
 * `hook_id`; webhooks also get `kind` (the event) and `request_id` at the top level.
 */
export const HookPayloadSchemas = {
  pre_tool_use: z.looseObject(toolCall),
  post_tool_use: z.looseObject({
    ...toolCall,
    result: z.looseObject({ output: z.string(), exit_code: z.number().int().nullable() }),
  }),
  permission_request: z.looseObject(toolCall),
  pre_prompt: z.looseObject({ session_id: z.string(), prompt: z.string() }),
  generate_start: z.looseObject({ session_id: z.string(), prompt: z.string() }),
  generate_end: z.looseObject({ session_id: z.string(), response_text: z.string() }),
  session_start: z.looseObject({ session_id: z.string() }),
  session_end: z.looseObject({ session_id: z.string() }),
  on_error: z.looseObject({ session_id: z.string(), error_type: z.string(), error_message: z.string() }),
  pre_compact: z.looseObject({ session_id: z.string(), message_count: z.number().int() }),
  post_compact: z.looseObject({
    session_id: z.string(),
    message_count_before: z.number().int(),
    message_count_after: z.number().int(),
  }),
  skill_load: z.looseObject({ ...skillEvent, trigger: z.enum(['skill_tool', 'added']) }),
  skill_unload: z.looseObject({ ...skillEvent, trigger: z.enum(['skill_tool', 'removed']) }),
  post_response: z.looseObject(runResult),
  on_success: z.looseObject(runResult),
  pre_context_perception: z.looseObject({ ...run, prompt: z.string(), providers: z.array(z.string()) }),
  post_context_perception: z.looseObject({
    ...run,
    providers: z.array(z.string()),
    total_items: z.number().int(),
    total_tokens: z.number().int(),
    duration_ms: z.number().int(),
  }),
  pre_memory_recall: z.looseObject({
    session_id: z.string(),
    query: z.string().nullable(),
    tags: z.array(z.string()),
    limit: z.number().int(),
  }),
  post_memory_recall: z.looseObject({
    session_id: z.string(),
    query: z.string().nullable(),
    tags: z.array(z.string()),
    items_count: z.number().int(),
    duration_ms: z.number().int(),
  }),
  pre_planning: z.looseObject({
    ...run,
    task_description: z.string(),
    available_strategies: z.array(z.string()),
    planning_mode: z.string(),
  }),
  post_planning: z.looseObject({
    ...run,
    task_description: z.string(),
    strategy_used: z.string(),
    subtasks: z.array(z.string()),
    success: z.boolean(),
    error: z.string().optional(),
  }),
  pre_reasoning: z.looseObject({ ...run, turn: z.number().int(), model: z.string() }),
  post_reasoning: z.looseObject({
    ...run,
    turn: z.number().int(),
    model: z.string(),
    reasoning_text: z.string(),
    duration_ms: z.number().int(),
  }),
  on_rate_limit: z.looseObject({
    session_id: z.string(),
    provider: z.string(),
    model: z.string(),
    status: z.number().int(),
    retry_after_ms: z.number().int().nullable(),
    attempt: z.number().int(),
    will_retry: z.boolean(),
  }),
  on_confirmation: z.looseObject({
    session_id: z.string(),
    tool_id: z.string(),
    tool_name: z.string(),
    outcome: z.enum(['approved', 'rejected', 'timeout', 'cancelled']),
    approved: z.boolean(),
  }),
  intent_detection: z.looseObject({
    ...run,
    prompt: z.string(),
    requires_planning: z.boolean(),
    source: z.enum(['pre_analysis', 'keywords']),
  }),
  budget_threshold_hit: z.looseObject({ session_id: z.string(), resource: z.string() }),
  passivation_requested: z.looseObject({
    session_id: z.string(),
    reason: z.string(),
    deadline_ms: z.number().int().optional(),
  }),
  peer_invocation: z.looseObject({
    session_id: z.string(),
    from_session_id: z.string(),
    from_tenant_id: z.string().optional(),
    correlation_id: z.string().optional(),
  }),
} as const satisfies Record<HookEvent, z.ZodType>;

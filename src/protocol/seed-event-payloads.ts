import { AgentGoalSchema, ExecutionPlanSchema, PlanTaskSchema, TaskStatusSchema } from './planning.js';
import { z } from 'zod';
import { RUN_ERROR_CODES } from '../errors.js';
import { VerificationStatusSchema } from './verification.js';
import { VerificationSummarySchema } from './verification-summary.js';

/** TokenUsage in payloads (the seed's snake_case fields; cache counts when the provider reports them). */
export const TokenUsageSchema = z
  .object({
    prompt_tokens: z.number().int().nonnegative(),
    completion_tokens: z.number().int().nonnegative(),
    total_tokens: z.number().int().nonnegative(),
    cache_read_tokens: z.number().int().nonnegative().nullable().optional(),
    cache_write_tokens: z.number().int().nonnegative().nullable().optional(),
  })
  .meta({ id: 'TokenUsage' });

/** The seed's ToolErrorKind: why a tool call failed, tagged by `type`. */
export const ToolErrorKindSchema = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('version_conflict'),
      path: z.string(),
      expected: z.string(),
      actual: z.string().optional(),
    }),
    z.object({ type: z.literal('remote_git_conflict'), code: z.string(), message: z.string() }),
    z.object({ type: z.literal('not_found'), path: z.string() }),
    z.object({ type: z.literal('invalid_argument'), message: z.string() }),
    z.object({
      type: z.literal('hook_denied'),
      reason: z.string(),
      retryable: z.boolean(),
      retry_after_ms: z.number().int().nonnegative().optional(),
    }),
    z.object({ type: z.literal('unsupported'), message: z.string() }),
    z.object({ type: z.literal('timeout'), op: z.string(), duration_ms: z.number().int().nonnegative() }),
    z.object({ type: z.literal('transport'), op: z.string() }),
    z.object({ type: z.literal('cancelled'), op: z.string() }),
    z.object({
      type: z.literal('partial_failure'),
      failed: z.number().int().nonnegative(),
      total: z.number().int().nonnegative(),
    }),
    z.object({ type: z.literal('rate_limited'), retry_after_ms: z.number().int().nonnegative().optional() }),
  ])
  .meta({ id: 'ToolErrorKind' });

/** A parsed ToolErrorKind. */
export type ToolErrorKind = z.infer<typeof ToolErrorKindSchema>;

/** The seed's LlmResponseMeta (`agent_end.meta`): what the last provider response said about itself. */
export const LlmResponseMetaSchema = z
  .object({
    provider: z.string().optional(),
    request_model: z.string().optional(),
    request_url: z.string().optional(),
    response_id: z.string().optional(),
    response_model: z.string().optional(),
    response_object: z.string().optional(),
    first_token_ms: z.number().nonnegative().optional(),
    duration_ms: z.number().nonnegative().optional(),
  })
  .meta({ id: 'LlmResponseMeta' });

const toolCallIds = { id: z.string(), name: z.string() };
const anyObject = z.record(z.string(), z.unknown());

const digest = z
  .string()
  .regex(/^sha256:[0-9a-f]{64}$/)
  .describe('sha256 of the bytes, as sha256:<hex>');
const count = z.number().int().nonnegative();

/**
 * The evidence-binding snapshots (the seed's events 8 and 24-27; the seed names their fields loosely, these
 * are ours, documented in README's event section). Digests are sha256 of exactly what was bound: the tools as
 * presented (their JSON), the provider request body as sent, the validated arguments of a tool call.
 */
export const RunCapabilitySnapshotSchema = z
  .object({
    model: z.string(),
    tools: z.array(z.string()).describe('the tool names the run offers the model, in presentation order'),
    tools_digest: digest,
    max_tool_rounds: count,
    max_execution_time_ms: count,
    max_parse_retries: count,
    duplicate_tool_call_threshold: count,
    tool_timeout_ms: count,
  })
  .meta({ id: 'RunCapabilitySnapshot' });

/** Which tool definitions one model call was given. */
export const ModelPresentationSnapshotSchema = z
  .object({
    call_sequence: z.number().int().positive().describe("the run's model turn this call is (1-based)"),
    tool_count: count,
    tools: z.array(z.string()),
    tools_digest: digest,
  })
  .meta({ id: 'ModelPresentationSnapshot' });

/** What one provider request of a model call carried (each retry is one more). */
export const ModelInputSnapshotSchema = z
  .object({
    call_sequence: z.number().int().positive(),
    model: z.string(),
    message_count: count,
    input_bytes: count,
    input_digest: digest,
  })
  .meta({ id: 'ModelInputSnapshot' });

/** What the provider reported for one model call, and the tool results its input held. */
export const ModelUsageSnapshotSchema = z
  .object({
    call_sequence: z.number().int().positive(),
    reported_prompt_tokens: count,
    reported_completion_tokens: count,
    reported_total_tokens: count,
    reported_cache_read_tokens: count.nullable(),
    reported_cache_write_tokens: count.nullable(),
    tool_results: z.object({ total_count: count, unique_count: count }),
  })
  .meta({ id: 'ModelUsageSnapshot' });

/** The seed's ToolRequestSnapshotV1: a tool call as bound after validation, before the gates that follow. */
export const ToolRequestSnapshotSchema = z
  .object({
    version: z.literal(1),
    origin: z.string(),
    args_bytes: count,
    args_digest: digest.describe('sha256 of the JSON of the validated arguments'),
  })
  .meta({ id: 'ToolRequestSnapshot' });

/** The seed's budget event fields (`budget_threshold_hit`; the `budget_exhausted` extension has the same shape). */
export const BudgetEventFields = {
  resource: z.string().describe('llm_tokens, tool_calls, wall_time, usd_cost, or a host-defined resource'),
  kind: z.enum(['soft', 'hard']),
  consumed: z.number(),
  limit: z.number().nullable().describe('null only when a budget host denied without naming its limit'),
  message: z.string().optional(),
  /** Extension: where the limit lives (session, tenant, host). */
  scope: z.string().optional(),
  tool_id: z.string().optional(),
  tool_name: z.string().optional(),
};

/**
 * Payload schemas of the seed's 52 v1 event types, with the seed's field names (SEED-REFERENCE §1.2). Fields
 * after the seed's are the server's additive extras. Objects are open: consumers keep fields they do not know.
 */
export const SEED_EVENT_PAYLOADS = {
  agent_start: z.object({ prompt: z.string(), model: z.string().optional(), side_question: z.boolean().optional() }),
  agent_mode_changed: z.object({ mode: z.string(), agent: z.string(), description: z.string() }),
  turn_start: z.object({ turn: z.number().int().positive() }),
  text_delta: z.object({ text: z.string() }),
  reasoning_delta: z.object({ text: z.string() }),
  tool_start: z.object(toolCallIds),
  tool_input_delta: z.object({ id: z.string(), delta: z.string() }),
  tool_request_bound: z.object({ tool_id: z.string(), tool_name: z.string(), snapshot: ToolRequestSnapshotSchema }),
  tool_execution_start: z.object({
    ...toolCallIds,
    args: z.unknown(),
    origin: z.string().optional(),
    parent_tool_id: z.string().optional(),
  }),
  tool_end: z.object({
    ...toolCallIds,
    output: z.string(),
    exit_code: z.number().int(),
    metadata: anyObject.optional(),
    error_kind: ToolErrorKindSchema.optional(),
    duration_ms: z.number().int().nonnegative(),
    truncated: z.boolean(),
    artifact_id: z.string().optional(),
  }),
  tool_output_delta: z.object({ ...toolCallIds, delta: z.string() }),
  turn_end: z.object({
    turn: z.number().int().positive(),
    usage: TokenUsageSchema,
    finish_reason: z.string().optional(),
  }),
  agent_end: z.object({
    text: z.string(),
    usage: TokenUsageSchema,
    verification_summary: VerificationSummarySchema,
    meta: LlmResponseMetaSchema.optional(),
    status: z.enum(['completed', 'failed', 'cancelled']),
    tool_calls_count: z.number().int().nonnegative(),
    verification_status: VerificationStatusSchema,
    pending_verification_count: z.number().int().nonnegative(),
    failed_verification_count: z.number().int().nonnegative(),
    verification_report_count: z.number().int().nonnegative(),
    verification_summary_text: z.string().nullable(),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
  }),
  error: z.object({
    message: z.string(),
    code: z.enum(RUN_ERROR_CODES),
    status: z.number().int().min(100).max(599).optional(),
  }),
  confirmation_required: z.object({
    tool_id: z.string(),
    tool_name: z.string(),
    args: z.unknown(),
    timeout_ms: z.number().int().nonnegative(),
    args_digest: z.string().optional(),
    rule: z.string().optional(),
  }),
  confirmation_received: z.object({
    tool_id: z.string(),
    approved: z.boolean(),
    reason: z.string().nullable(),
    tool_name: z.string().optional(),
  }),
  confirmation_timeout: z.object({
    tool_id: z.string(),
    action_taken: z.enum(['rejected', 'auto_approved']),
    tool_name: z.string().optional(),
  }),
  user_question: z.object({
    question_id: z.string(),
    question: z.string(),
    options: z.array(z.unknown()),
    allow_free_text: z.boolean(),
    /** Ours: the ask_user call that asks, and how long it waits for an answer (the confirmation policy's timeout). */
    tool_call_id: z.string().optional(),
    timeout_ms: z.number().int().optional(),
  }),
  external_task_pending: z.object({
    task_id: z.string(),
    session_id: z.string(),
    lane: z.string(),
    command_type: z.string(),
    payload: z.unknown(),
    timeout_ms: z.number().int().nonnegative(),
  }),
  external_task_completed: z.object({ task_id: z.string(), session_id: z.string(), success: z.boolean() }),
  permission_denied: z.object({
    tool_id: z.string(),
    tool_name: z.string(),
    args: z.unknown(),
    reason: z.string(),
    rule: z.string().optional(),
  }),
  context_resolving: z.object({ providers: z.array(z.string()) }),
  context_resolved: z.object({
    total_items: z.number().int().nonnegative(),
    total_tokens: z.number().int().nonnegative(),
  }),
  run_capability_bound: z.object({
    call_sequence: z.number().int().nonnegative(),
    snapshot: RunCapabilitySnapshotSchema,
  }),
  model_presentation_bound: z.object({ snapshot: ModelPresentationSnapshotSchema }),
  model_input_bound: z.object({ snapshot: ModelInputSnapshotSchema }),
  model_usage_bound: z.object({ snapshot: ModelUsageSnapshotSchema }),
  cognitive_context_bound: z.object({ binding: anyObject }),
  command_dead_lettered: z.object({
    command_id: z.string(),
    command_type: z.string(),
    lane: z.string(),
    error: z.string(),
    attempts: z.number().int().nonnegative(),
  }),
  command_retry: z.object({
    command_id: z.string(),
    command_type: z.string(),
    lane: z.string(),
    attempt: z.number().int().nonnegative(),
    delay_ms: z.number().int().nonnegative(),
  }),
  queue_alert: z.object({ level: z.string(), alert_type: z.string(), message: z.string() }),
  task_updated: z.object({ session_id: z.string(), tasks: z.array(PlanTaskSchema) }),
  memory_stored: z.object({
    memory_id: z.string(),
    memory_type: z.string(),
    importance: z.number(),
    tags: z.array(z.string()),
  }),
  memory_recalled: z.object({ memory_id: z.string(), content: z.string(), relevance: z.number() }),
  memories_searched: z.object({
    query: z.string().nullable(),
    tags: z.array(z.string()),
    result_count: z.number().int().nonnegative(),
  }),
  memory_cleared: z.object({ tier: z.string(), count: z.number().int().nonnegative() }),
  subagent_start: z.object({
    task_id: z.string(),
    session_id: z.string(),
    parent_session_id: z.string(),
    agent: z.string(),
    description: z.string(),
    started_ms: z.number().int().optional(),
  }),
  subagent_progress: z.object({ task_id: z.string(), session_id: z.string(), status: z.string(), metadata: anyObject }),
  subagent_end: z.object({
    task_id: z.string(),
    session_id: z.string(),
    agent: z.string(),
    output: z.string(),
    success: z.boolean(),
    finished_ms: z.number().int().optional(),
  }),
  planning_start: z.object({ prompt: z.string() }),
  planning_end: z.object({ plan: ExecutionPlanSchema, estimated_steps: z.number().int().nonnegative() }),
  step_start: z.object({
    step_id: z.string(),
    description: z.string(),
    step_number: z.number().int(),
    total_steps: z.number().int(),
  }),
  step_end: z.object({
    step_id: z.string(),
    status: TaskStatusSchema,
    step_number: z.number().int(),
    total_steps: z.number().int(),
  }),
  goal_extracted: z.object({ goal: AgentGoalSchema }),
  goal_progress: z.object({
    goal: z.string(),
    progress: z.number(),
    completed_steps: z.number().int(),
    total_steps: z.number().int(),
  }),
  goal_achieved: z.object({ goal: z.string(), total_steps: z.number().int(), duration_ms: z.number().int() }),
  context_compacted: z.object({
    session_id: z.string(),
    before_messages: z.number().int(),
    after_messages: z.number().int(),
    percent_before: z.number(),
    summary: z.string().optional(),
  }),
  run_control_applied: z.object({
    request_id: z.string(),
    operation: z.string(),
    turn_id: z.string(),
    turn_revision: z.number().int(),
    input: z.string().optional(),
    reason: z.string().optional(),
  }),
  persistence_failed: z.object({
    session_id: z.string(),
    operation: z.string(),
    error: z.string(),
    code: z.string().optional(),
  }),
  budget_threshold_hit: z.object(BudgetEventFields),
  passivation_requested: z.object({ reason: z.string(), deadline_ms: z.number().int().nonnegative().optional() }),
  peer_invocation: z.object({
    from_session_id: z.string(),
    from_tenant_id: z.string().optional(),
    correlation_id: z.string().optional(),
  }),
};

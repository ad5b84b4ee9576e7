import { z } from 'zod';
import { BudgetEventFields } from './seed-event-payloads.js';

const runStatus = z.enum([
  'queued',
  'created',
  'planning',
  'executing',
  'verifying',
  'completed',
  'failed',
  'cancelled',
]);

/** Payload schemas of the server's extension event types; their keys are EXTENSION_EVENT_TYPES, in this order. */
export const EXTENSION_EVENT_PAYLOADS = {
  /** A run's status moved (the seed's RunStatus machine, §1.4). */
  run_status_changed: z.object({ from: runStatus, to: runStatus }),
  /** This run continues another run's loop checkpoint. */
  run_resumed: z.object({ from_run_id: z.string(), turn: z.number().int().nonnegative() }),
  /**
   * A run was admitted behind the active one (multitaskStrategy enqueue, interrupt or rollback): it waits in the
   * session's run queue (`queue_position` 1 starts next) and starts, with agent_start, when the session frees.
   */
  run_queued: z.object({
    run_id: z.string(),
    queue_position: z.number().int().positive(),
    strategy: z.enum(['enqueue', 'interrupt', 'rollback']),
  }),
  /**
   * The run was cancelled by a rollback (multitaskStrategy rollback of `by_run_id`): the transcript is as before
   * it; its events stay in the log. Its files are reverted before its end (run_files_rolled_back).
   */
  run_rolled_back: z.object({ by_run_id: z.string() }),
  /**
   * The files of a rolled-back run (multitaskStrategy rollback of `by_run_id`), before its agent_end: `restored`
   * (its change set reverted: `files` paths written or removed), `unchanged` (it changed no file), `no_change_set`
   * (none was captured: `reason`, `message`; its files stay as they are), `conflict` (a path it changed was changed
   * since by someone else: `paths`; nothing written) or `failed` (`message`). docs/runs.md.
   */
  run_files_rolled_back: z.object({
    by_run_id: z.string(),
    status: z.enum(['restored', 'unchanged', 'no_change_set', 'conflict', 'failed']),
    files: z.number().int().nonnegative(),
    paths: z.array(z.string()).optional(),
    reason: z.string().optional(),
    message: z.string().optional(),
  }),
  /**
   * The model stopped calling tools but looked unfinished (continuationEnabled): the continuation prompt was
   * injected. `reason`: `length` (finish_reason), `empty_after_tools` (an empty answer to tool results) or
   * `announces_next_step` (its last sentence announces a step instead of a result; docs/session-options.md).
   */
  continuation_injected: z.object({
    turn: z.number().int().positive(),
    continuation: z.number().int().positive(),
    reason: z.enum(['length', 'empty_after_tools', 'announces_next_step']),
  }),
  /**
   * A retryable provider failure (429, 5xx, a dropped connection) that will be retried after `delay_ms`
   * (the provider's Retry-After, capped at 30 s, else backoff); the run goes on (never an `error` event).
   * `attempt` counts retries from 1, `threshold` is the retries allowed (`providers.<name>.max_retries`),
   * `status` the HTTP status (null without one), `turn` absent for a helper call (planning, compaction).
   */
  provider_retry: z.object({
    turn: z.number().int().positive().optional(),
    attempt: z.number().int().positive(),
    threshold: z.number().int().positive(),
    status: z.number().int().nullable(),
    delay_ms: z.number().int().nonnegative(),
    message: z.string(),
  }),
  /** The run's loop checkpoint was written after a tool round. */
  checkpoint_saved: z.object({ turn: z.number().int().nonnegative(), store: z.string() }),
  /** The session was closed (`closed` by a client, or passivated, taken over, shut down). */
  session_closed: z.object({ reason: z.string() }),
  /** A pre_tool_use hook denied a tool call. */
  hook_blocked: z.object({
    tool_id: z.string(),
    tool_name: z.string(),
    hook_id: z.string().nullable(),
    reason: z.string(),
  }),
  /** A budget denied a provider or tool call (the hard twin of budget_threshold_hit). */
  budget_exhausted: z.object(BudgetEventFields),
  /** An MCP server of the session connected. */
  mcp_server_connected: z.object({ server: z.string() }),
  /** An MCP server of the session disconnected. */
  mcp_server_disconnected: z.object({ server: z.string(), reason: z.string().nullable() }),
  /** The tools an MCP server offers changed. */
  mcp_tools_changed: z.object({ server: z.string(), reason: z.string(), tools: z.array(z.string()) }),
  /** A verification started (REST, host-direct). */
  verification_started: z.object({ subject: z.string(), commands: z.number().int().nonnegative() }),
  /** A verification report was recorded. */
  verification_completed: z.object({
    report_id: z.string(),
    subject: z.string(),
    status: z.string(),
    failed_required: z.number().int().nonnegative(),
  }),
  /**
   * Something the run tried did not work and the run went on without it: a plan that did not parse after its
   * repairs (the run continues unplanned), a goal that could not be extracted or checked, a compaction that
   * was blocked or refused.
   */
  run_warning: z.object({
    source: z.enum(['planning', 'goal', 'compaction']),
    message: z.string(),
    fallback: z.string().optional(),
  }),
  /**
   * The session's workspace was pinned again on restore (another node, or the directory was recreated: `repinned`),
   * is no longer the pinned directory (`changed`: file tools and commands fail with WORKSPACE_CHANGED until it is
   * back), or a file the server reads from it (AGENTS.md, a skill or agent file) leads outside and was skipped
   * (`skipped`).
   */
  workspace_warning: z.object({
    kind: z.enum(['repinned', 'changed', 'skipped']),
    workspace: z.string(),
    message: z.string(),
    path: z.string().optional(),
  }),
  /** A run that changed files ended: its change set (GET .../runs/:runId/changes) is stored (docs/changes.md). */
  run_changes_captured: z.object({
    run_id: z.string(),
    files: z.number().int().nonnegative(),
    patch_bytes: z.number().int().nonnegative(),
    patch_digest: z.string(),
  }),
  /**
   * The session is a fork (POST /v1/sessions/:id/fork): the first event of its log. `parent_session_id` is the
   * session it came from (`parent_tenant_id` when that is another tenant's), `at_run_id` the run it was forked
   * just before (absent: at a message index or whole), `at_message` how many of the parent's messages it kept.
   */
  session_forked: z.object({
    parent_session_id: z.string(),
    parent_tenant_id: z.string().optional(),
    at_run_id: z.string().optional(),
    at_message: z.number().int().nonnegative(),
    workspace: z.enum(['shared', 'copy']),
    /** With `copy`: the tree the copy was written from (`git-tree:<id>`). */
    tree: z.string().optional(),
  }),
  /**
   * POST .../runs/:runId/revert: `run_id`'s files and those of the runs after it were restored to their state before
   * it (`files`: how many paths were written or removed), and the transcript from it on is hidden from the model
   * (`run_ids`: the reverted runs; docs/changes.md).
   */
  session_reverted: z.object({
    run_id: z.string(),
    run_ids: z.array(z.string()),
    files: z.number().int().nonnegative(),
    hidden_messages: z.number().int().nonnegative(),
  }),
  /** POST .../unrevert: the reverted runs' files and messages are back (`files`: paths written or removed). */
  session_unreverted: z.object({
    run_id: z.string(),
    run_ids: z.array(z.string()),
    files: z.number().int().nonnegative(),
    restored_messages: z.number().int().nonnegative(),
  }),
};

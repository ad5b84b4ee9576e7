import type { SessionSlashCommands } from '../commands/session-slash-commands.js';
import type { ChatMessage } from '../../protocol/chat-message.js';
import type { EventEnvelope } from '../../protocol/event-envelope.js';
import type { RunRecord, Usage } from '../../protocol/run-record.js';
import type { Artifact, SessionSnapshotV1 } from '../../protocol/session-snapshot.js';
import type { McpServerConfig, McpServerConfigInput } from '../../protocol/mcp.js';
import type { VerificationReport, VerificationRequest } from '../../protocol/verification.js';
import type { BudgetHostEndpoint } from '../../protocol/budget.js';
import type { ConfirmationInheritance, SubagentTaskSnapshot, TaskRequest } from '../../protocol/subagent-task.js';
import type { SessionEventLog } from '../events/session-event-log.js';
import type { ToolCallOutcome } from '../invocation/tool-invoker.js';
import type { LlmToolSpec } from '../llm/llm-provider.js';
import type { McpManager, McpRefreshResult } from '../mcp/mcp-manager.js';
import type { AgentMemory } from '../memory/agent-memory.js';
import type { SessionQueue } from '../queue/session-queue.js';
import type { AnsweredConfirmation, ConfirmationAnswer, PendingConfirmation } from '../policy/confirmation-broker.js';
import type { HookEngine } from '../policy/hooks/hook-engine.js';
import type { SessionGovernance } from '../policy/session-governance.js';
import type { SessionCommands } from '../sandbox/session-commands.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { sessionKey, type SessionKey } from '../../stores/session-key.js';
import { messageBytes } from '../compaction/estimate-tokens.js';
import type { AgentSessionDeps, RestoredState } from './agent-session-deps.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import type { RunHandle, RunRequest } from './run-handle.js';
import { closeSessionParts } from './close-session-parts.js';
import { buildSessionParts, type SessionParts } from './session-parts.js';

/**
 * One live session: its transcript, single-flight admission, runs and their event log, artifacts and
 * snapshots. Every transcript-affecting operation goes through `startRun`. The work is done by its parts
 * (see session-parts.ts); this class is the one surface routes, adapters and the agent use.
 */
export class AgentSession {
  readonly id: string;
  /** The session's address (tenant and id): what maps, stores and leases key it by. */
  readonly key: SessionKey;
  readonly events: SessionEventLog;
  readonly createdAtMs: number;
  /** Last time a request or run used the session (the idle reaper passivates old ones). */
  lastActivityMs = 0;
  /** Where the session's model-chosen commands run (session info reports its kind). */
  readonly sandbox: SessionCommands;
  /** The session's AgentMemory (SessionOptions.memoryStore), undefined without one. */
  readonly memory: AgentMemory | undefined;
  /** The session's lane queue (SessionOptions.queueConfig), undefined without one. */
  readonly queue: SessionQueue | undefined;
  private readonly parts: SessionParts;

  constructor(
    readonly config: ResolvedSessionConfig,
    private readonly deps: AgentSessionDeps,
    restored?: RestoredState,
  ) {
    this.id = config.sessionId;
    this.key = sessionKey(config.ownerTenantId, config.sessionId);
    this.createdAtMs = restored?.createdAtMs ?? deps.hostEnv.now();
    this.lastActivityMs = deps.hostEnv.now();
    this.parts = buildSessionParts(config, deps, restored, { key: this.key, createdAtMs: this.createdAtMs, touch: () => this.runEnded() });
    this.events = this.parts.events;
    this.sandbox = this.parts.commands;
    this.memory = this.parts.memory;
    this.queue = this.parts.queue;
  }

  /** The session's tools. */
  get registry(): ToolRegistry {
    return this.parts.tools.registry;
  }

  /** Every MCP layer of the session, outermost first: global, inherited (host-supplied), then its own. */
  mcpLayers(): McpManager[] {
    return this.parts.tools.layers();
  }

  /** The session's own MCP servers (created on first use; closed with the session). */
  get mcp(): McpManager {
    return this.parts.tools.local;
  }

  /** Attach host-supplied MCP servers as a read-only inherited layer (from SessionOptions.mcpServers). */
  attachInheritedMcp(manager: McpManager): void {
    this.parts.tools.attachInherited(manager);
  }

  /**
   * Add one of the session's own MCP servers (POST .../mcp). An autoSave session stores its configuration at
   * once, so a restore on any node, even after this one dies, registers it again.
   */
  async addMcpServer(input: McpServerConfigInput): Promise<{ toolCount: number }> {
    this.assertOpen();
    const added = await this.parts.tools.local.add(input);
    await this.parts.saves.saveIfAutoSave();
    return added;
  }

  /** Remove one of the session's own MCP servers (its process group is killed) and, with autoSave, from the store; false when there is none of that name. */
  async removeMcpServer(name: string): Promise<boolean> {
    const removed = await this.parts.tools.local.remove(name);
    if (removed) await this.parts.saves.saveIfAutoSave();
    return removed;
  }

  /** Re-register the session's own MCP servers from its snapshot (restore only); a server that cannot start keeps its error. */
  restoreOwnMcp(configs: readonly McpServerConfig[]): Promise<McpRefreshResult[]> {
    return this.parts.tools.restoreLocal(configs);
  }

  /** The session's governance (policy, confirmation broker, hooks, budget, redaction); built on first use. */
  get governance(): SessionGovernance {
    return this.parts.governance.parts().governance;
  }

  /** Tool specs the model sees: tools denied for every argument are hidden. */
  modelToolSpecs(): readonly LlmToolSpec[] {
    return this.parts.tools.modelSpecs();
  }

  /**
   * Set (or with undefined remove) the external budget host this session's guard consults. A WebSocket
   * host must be a connection of the session's tenant (registered with host_register). A webhook may call
   * private addresses only with `allowPrivateNetworks` (the caller's right, checked by the route).
   */
  setBudgetHost(endpoint: BudgetHostEndpoint | undefined, allowPrivateNetworks = false): void {
    this.assertOpen();
    this.parts.governance.setBudgetHost(endpoint, allowPrivateNetworks);
  }

  /** The session's hook engine (REST and WebSocket hook registration). */
  get hooks(): HookEngine {
    return this.parts.governance.parts().hooks;
  }

  /** The session's slash commands (built-ins, config `commands`, POST .../commands). */
  get slashCommands(): SessionSlashCommands {
    return this.parts.slashCommands();
  }

  /** Tell session_start hooks; only sessions with hooks build their engine for it (idle sessions stay small). */
  notifyStart(): void {
    this.parts.governance.notifyStart();
  }

  /** Provider calls made by this session (all through its one LLM invoker). */
  get llmCallCount(): number {
    return this.parts.llm.callCount;
  }

  /** Pending human confirmations. */
  pendingConfirmations(): PendingConfirmation[] {
    return this.parts.governance.current?.governance.broker.list() ?? [];
  }

  /** Answer a pending confirmation (404 unknown, 409 already settled or digest mismatch); `always` may add a grant (ConfirmationBroker). */
  answerConfirmation(toolId: string, answer: ConfirmationAnswer): AnsweredConfirmation {
    this.assertOpen();
    return this.governance.broker.answer(toolId, answer);
  }

  /** Note activity now. */
  touch(): void {
    this.lastActivityMs = this.deps.hostEnv.now();
  }

  /**
   * UTF-8 bytes of what the session's runs accumulate in memory: its transcript (as limits.maxTranscriptBytes
   * measures it) and its artifacts. limits.maxSessionBytesPerTenant counts them (beside the options and a fixed
   * overhead) when the session goes live and after each run.
   */
  contentBytes(): number {
    return messageBytes(this.parts.transcript.messages) + this.parts.artifacts.bytes;
  }

  /** A run ended: note the activity and re-measure what the session holds. */
  private runEnded(): void {
    this.touch();
    this.deps.sessionBytes?.resize(this.key, this, this.contentBytes());
  }

  /** True once closed. */
  get isClosed(): boolean {
    return this.parts.lifecycle.isClosed;
  }

  /** The active run's id, if any. */
  get activeRunId(): string | undefined {
    return this.parts.flight.runId;
  }

  /** A copy of the transcript. */
  history(): ChatMessage[] {
    return [...this.parts.transcript.messages];
  }

  /** Accumulated token usage. */
  totalUsage(): Usage {
    return { ...this.parts.transcript.usage };
  }

  /** Run records, oldest first. */
  listRuns(): RunRecord[] {
    return this.parts.runs.list();
  }

  /** The newest run's `{id, status}`, null before the first run. */
  lastRun(): { id: string; status: RunRecord['status'] } | null {
    return this.parts.runs.last();
  }

  /** One run record. */
  getRun(runId: string): RunRecord {
    return this.parts.runs.require(runId);
  }

  /** A stored artifact. */
  getArtifact(id: string): Artifact | undefined {
    return this.parts.artifacts.get(id);
  }

  /** The bound that evicted an artifact (when it was evicted recently by this process), else undefined. */
  artifactEvictedBy(id: string): string | undefined {
    return this.parts.artifacts.evictedBy(id);
  }

  /** Throw SESSION_CLOSED when closed. */
  assertOpen(): void {
    this.parts.lifecycle.assertOpen(this.id);
  }

  /** The run an earlier request started with this Idempotency-Key, if any (still running or ended). */
  runForIdempotencyKey(key: string): RunHandle | undefined {
    return this.parts.runControl.forIdempotencyKey(key);
  }

  /**
   * Admit a run (single flight): fails at once with SESSION_BUSY while another run is active, before the
   * transcript is read. With a known idempotency key, returns the existing run instead.
   */
  startRun(request: RunRequest): RunHandle {
    return this.parts.runControl.start(request);
  }

  /** Cancel the active run if it has this id; false when it is not active. */
  cancelRun(runId: string): boolean {
    return this.parts.runControl.cancelRun(runId);
  }

  /** Cancel the active run (only when it has `runId`, if given); false when nothing matching runs. Never throws (seed `cancel()`/`cancelRun()`). */
  cancel(runId?: string): boolean {
    return this.parts.runControl.cancel(runId);
  }

  /** The active run's snapshot `{id, status}`, or null when idle (seed `currentRun()`). */
  currentRun(): { id: string; status: RunRecord['status'] } | null {
    return this.parts.runControl.currentRun();
  }

  /** Up to `limit` trace events (seed `traceEvents()`) with session_sequence > after: the newest retention.maxTraceEvents events of the session's log. */
  traceEvents(after: number, limit: number): EventEnvelope[] {
    return this.events.trace(after, limit, this.config.retention.maxTraceEvents);
  }

  /**
   * Run one tool call from the host (no lease, no model); events carry no run id. `host_direct` skips the
   * permission and confirmation decisions; `governed_direct` applies them in full.
   */
  async invokeToolDirect(name: string, args: unknown, origin: 'host_direct' | 'governed_direct' = 'host_direct', confirmationInheritance?: ConfirmationInheritance): Promise<ToolCallOutcome> {
    return this.parts.directCalls.invoke(name, args, origin, confirmationInheritance);
  }

  /** Wait until no run is active, at most `timeoutMs` (passivation lets a run finish before its deadline). */
  async waitIdle(timeoutMs: number): Promise<void> {
    await this.parts.flight.waitIdle(timeoutMs);
  }

  /** Give the session up after another node took it over: stop work, save and publish nothing more. */
  async abandon(): Promise<void> {
    this.parts.lifecycle.abandon();
    await this.close('lost');
  }

  /** Close: cancel in-flight work, wait for it to end, emit session_closed. Idempotent. */
  async close(reason = 'closed'): Promise<void> {
    await closeSessionParts(this.parts, this.config, reason);
  }

  /** Record that a run in flight on a node that died is lost (status failed, error NODE_LOST). */
  markRunLost(runId: string, input: string, createdAtMs?: number): void {
    this.parts.runs.markLost(runId, input, createdAtMs);
  }

  /** True when this session was ever saved (its store holds a generation). */
  get saved(): boolean {
    return this.parts.saves.saved;
  }

  /** Save one complete snapshot generation through the store; emits persistence_failed on failure. */
  async save(): Promise<number> {
    return this.parts.saves.save();
  }

  /** True when something happened (any event) since the last saved generation, or it was never saved. */
  get dirty(): boolean {
    return this.parts.saves.dirty;
  }

  /** The session as one SessionSnapshotV1 generation. */
  toSnapshot(generation = this.parts.saves.generation): SessionSnapshotV1 {
    return this.parts.saves.snapshot(generation);
  }

  /** The session's workspace (canonical path). */
  get workspace(): string {
    return this.config.workspace;
  }

  /** Verification reports, oldest first. */
  listVerifications(): VerificationReport[] {
    return this.parts.verifications.list();
  }

  /** Run verification commands through bash on the host-direct path and keep the report (no run lease). */
  async runVerification(request: VerificationRequest): Promise<VerificationReport> {
    this.assertOpen();
    const report = await this.parts.verifications.run(request);
    await this.parts.saves.saveIfAutoSave();
    return report;
  }

  /** Inject a host-supplied cluster event: subscribers see it and hooks observe it. */
  injectClusterEvent(type: 'budget_threshold_hit' | 'passivation_requested' | 'peer_invocation', payload: Record<string, unknown>): void {
    this.assertOpen();
    this.parts.emit(this.parts.flight.runId, type, payload as never);
    this.hooks.observe(type, { session_id: this.id, ...payload, labels: this.config.labels }, { sessionId: this.id });
  }

  /** The session's subagent tasks, oldest first. */
  listTasks(): SubagentTaskSnapshot[] {
    return this.parts.tasks.list();
  }

  /** One subagent task (TASK_NOT_FOUND when the session has none of that id). */
  getTask(taskId: string): SubagentTaskSnapshot {
    return this.parts.tasks.require(taskId);
  }

  /**
   * Run host-selected tasks (POST .../tasks, the seed's `session.task()` / `session.tasks()`): one `task` or
   * `parallel_task` call on the host-direct path; the children's own calls are governed as always.
   */
  async runHostTasks(request: TaskRequest): Promise<ToolCallOutcome> {
    return this.parts.directCalls.runTasks(request);
  }
}

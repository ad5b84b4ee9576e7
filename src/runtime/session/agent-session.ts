import { CodeError } from '../../errors.js';
import type { ChatMessage } from '../../protocol/chat-message.js';
import type { EventEnvelope } from '../../protocol/event-envelope.js';
import type { RunRecord, Usage } from '../../protocol/run-record.js';
import type { Artifact, SessionSnapshotV1 } from '../../protocol/session-snapshot.js';
import type { McpServerConfig, McpServerConfigInput } from '../../protocol/mcp.js';
import type { VerificationReport, VerificationRequest } from '../../protocol/verification.js';
import { SessionEventLog } from '../events/session-event-log.js';
import { createInvocationContext, type InvocationContext } from '../invocation/invocation-context.js';
import { LlmInvoker } from '../invocation/llm-invoker.js';
import type { ToolInvokerDeps } from '../invocation/tool-call-state.js';
import type { ToolCallOutcome } from '../invocation/tool-invoker.js';
import type { LlmToolSpec } from '../llm/llm-provider.js';
import type { McpManager, McpRefreshResult } from '../mcp/mcp-manager.js';
import type { PendingConfirmation } from '../policy/confirmation-broker.js';
import type { HookEngine } from '../policy/hooks/hook-engine.js';
import type { SessionGovernance } from '../policy/session-governance.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { AgentSessionDeps, RestoredState } from './agent-session-deps.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import type { RunHandle, RunRequest } from './run-handle.js';
import { produceRun, type RunProducerHost } from './run-producer.js';
import { SessionArtifacts } from './session-artifacts.js';
import { createSessionEmit, type SessionEmit, type SessionEventObserver } from './session-emitter.js';
import { budgetHostGuard, buildSessionGovernance, type SessionGovernanceParts } from './session-governance-factory.js';
import type { BudgetHostEndpoint } from '../../protocol/budget.js';
import { SessionLifecycle } from './session-lifecycle.js';
import { saveSnapshot } from './session-persistence.js';
import { isTerminal, SessionRuns } from './session-runs.js';
import { restoredRun, toSessionSnapshot } from './session-snapshot-codec.js';
import { SessionTools } from './session-tools.js';
import { SessionTranscript } from './session-transcript.js';
import { SessionVerifications } from './session-verifications.js';
import { SingleFlight } from './single-flight.js';
import { SessionCommands, UNSANDBOXED } from '../sandbox/session-commands.js';
import type { AgentMemory } from '../memory/agent-memory.js';
import { openAgentMemory, processMemoryStores } from '../memory/memory-stores.js';
import type { ConfirmationInheritance, SubagentTaskSnapshot, TaskRequest } from '../../protocol/subagent-task.js';
import { SessionDelegation } from '../delegation/session-delegation.js';
import { SubagentTasks } from '../delegation/subagent-tasks.js';
import { hostTaskCall } from '../delegation/host-task-call.js';
import { linkAbort } from '../delegation/link-abort.js';

/**
 * One live session: its transcript, single-flight admission, runs and their event log, artifacts and
 * snapshots. Every transcript-affecting operation goes through `startRun`.
 */
export class AgentSession {
  readonly id: string;
  readonly events: SessionEventLog;
  readonly createdAtMs: number;
  /** Last time a request or run used the session (the idle reaper passivates old ones). */
  lastActivityMs = 0;
  private readonly transcript: SessionTranscript;
  private readonly runs: SessionRuns;
  private readonly artifacts: SessionArtifacts;
  private readonly verifications: SessionVerifications;
  private readonly tools: SessionTools;
  /** Where the session's model-chosen commands run (session info reports its kind). */
  readonly sandbox: SessionCommands;
  private readonly emit: SessionEmit;
  private readonly flight = new SingleFlight();
  private readonly lifecycle = new SessionLifecycle();
  /** Host-direct calls in flight; close() aborts them. */
  private readonly directCalls = new Set<AbortController>();
  private generation: number;
  private governanceParts: SessionGovernanceParts | undefined;
  private readonly llm: LlmInvoker;
  /** The session's AgentMemory (SessionOptions.memoryStore), undefined without one. */
  readonly memory: AgentMemory | undefined;
  /** The session's subagent tasks (task, parallel_task, Skill, POST .../tasks). */
  private readonly tasks: SubagentTasks;

  constructor(
    readonly config: ResolvedSessionConfig,
    private readonly deps: AgentSessionDeps,
    restored?: RestoredState,
  ) {
    const { hostEnv, mcp } = deps;
    this.id = config.sessionId;
    this.createdAtMs = restored?.createdAtMs ?? hostEnv.now();
    this.lastActivityMs = hostEnv.now();
    this.transcript = new SessionTranscript(this.createdAtMs, restored?.messages, restored?.usage);
    this.generation = restored?.generation ?? 0;
    const { retention } = config;
    this.events = new SessionEventLog({ maxEventsPerRun: retention.maxEventsPerRun, maxRuns: retention.maxRuns, maxSessionEvents: retention.maxEventsPerRun }, restored?.sessionSequence ?? 0);
    // A restored session starts as saved: nothing changed since the generation it was read from.
    this.savedAtSequence = restored ? this.events.lastSequence : -1;
    // What the parts below share: the session's identity, workspace, clock and active run.
    const session = { sessionId: this.id, workspace: config.workspace, hostEnv, activeRunId: () => this.flight.runId };
    // A child's events are also seen by its parent's delegation (progress, forwarded asks).
    const child = deps.childOf;
    const onEvent = child ? childObserver(deps.onEvent, child.observe) : deps.onEvent;
    this.emit = createSessionEmit({ ...session, labels: config.labels, events: this.events, ownership: deps.ownership, abandoned: () => this.lifecycle.abandoned, onEvent });
    this.runs = new SessionRuns({ ...session, maxRuns: retention.maxRuns, events: this.events, emit: this.emit }, (restored?.runs ?? []).map(restoredRun));
    this.artifacts = new SessionArtifacts(hostEnv, { maxArtifacts: retention.maxArtifacts, maxBytes: retention.maxArtifactBytes }, restored?.artifacts);
    const directCalls = { invokeToolDirect: (name: string, args: unknown) => this.invokeToolDirect(name, args, 'host_direct'), getArtifact: (id: string) => this.getArtifact(id) };
    this.verifications = new SessionVerifications({ ...session, ...directCalls, emit: this.emit }, restored?.verifications);
    const globalMcp = { globalMcp: mcp.global, globalMcpVersion: () => mcp.version(), onMcpLog: (server: string, line: string) => mcp.onLog?.(this.id, server, line) };
    this.tasks = new SubagentTasks(retention.maxTerminalSubagentTasks, deps.delegation?.keepFinishedChildren ?? DEFAULT_DELEGATION.keepFinishedChildren, () => hostEnv.now(), restored?.subagentTasks);
    const delegation = new SessionDelegation({
      sessionId: this.id,
      depth: config.delegationDepth,
      limits: deps.delegation?.limits ?? DEFAULT_DELEGATION.limits,
      inheritance: deps.delegation?.inheritance ?? DEFAULT_DELEGATION.inheritance,
      hostEnv,
      emit: this.emit,
      activeRunId: () => this.flight.runId,
      agents: config.agents,
      skills: config.skills,
      tasks: this.tasks,
      parent: { config, hostEnv, governanceParts: () => this.governed(), mcpLayers: () => this.mcpLayers() },
      spawner: deps.children,
      storeArtifact: (content, toolCallId, toolName) => this.artifacts.store(content, toolCallId, toolName),
    });
    const commands = new SessionCommands(deps.sandbox ?? UNSANDBOXED, { sessionId: this.id, workspace: config.workspace, ...config.commands });
    this.sandbox = commands;
    const invokerDeps = (): Omit<ToolInvokerDeps, 'registry'> => ({
      governance: this.governance,
      storeArtifact: (content, toolCallId, toolName) => this.artifacts.store(content, toolCallId, toolName),
      afterExecute: (call, args, result, startedAtMs, ctx) => this.verifications.attachPresetReport(call, args, result, startedAtMs, ctx),
      commands,
      delegation,
    });
    this.tools = new SessionTools({ ...session, ...globalMcp, permissionPolicy: config.permissionPolicy, permissionFloor: config.permissionFloor, agentPermissions: config.permissionBounds, builtins: deps.tools, skills: config.skills, emit: this.emit, invokerDeps, mcpLauncher: commands.forOrigin('host_direct'), mcpAllowPrivate: config.outboundAllowPrivate });
    for (const manager of child?.borrowedMcp ?? []) this.tools.borrow(manager);
    if (restored) this.events.restore(restored.trace);
    this.llm = new LlmInvoker(config.model, () => this.governance);
    // Memory events belong to the active run when there is one (the context provider), else to the session.
    this.memory = openAgentMemory(config.memory, config.ownerTenantId, deps.memoryStores ?? processMemoryStores(), hostEnv, (type, payload) => this.emit(this.flight.runId, type, payload));
  }

  /** The session's tools. */
  get registry(): ToolRegistry {
    return this.tools.registry;
  }

  /** Every MCP layer of the session, outermost first: global, inherited (host-supplied), then its own. */
  mcpLayers(): McpManager[] {
    return this.tools.layers();
  }

  /** The session's own MCP servers (created on first use; closed with the session). */
  get mcp(): McpManager {
    return this.tools.local;
  }

  /** Attach host-supplied MCP servers as a read-only inherited layer (from SessionOptions.mcpServers). */
  attachInheritedMcp(manager: McpManager): void {
    this.tools.attachInherited(manager);
  }

  /**
   * Add one of the session's own MCP servers (POST .../mcp). An autoSave session stores its configuration at
   * once, so a restore on any node, even after this one dies, registers it again.
   */
  async addMcpServer(input: McpServerConfigInput): Promise<{ toolCount: number }> {
    this.assertOpen();
    const added = await this.tools.local.add(input);
    await this.saveIfAutoSave();
    return added;
  }

  /** Remove one of the session's own MCP servers (its process group is killed) and, with autoSave, from the store; false when there is none of that name. */
  async removeMcpServer(name: string): Promise<boolean> {
    const removed = await this.tools.local.remove(name);
    if (removed) await this.saveIfAutoSave();
    return removed;
  }

  /** Re-register the session's own MCP servers from its snapshot (restore only); a server that cannot start keeps its error. */
  restoreOwnMcp(configs: readonly McpServerConfig[]): Promise<McpRefreshResult[]> {
    return this.tools.restoreLocal(configs);
  }

  /** The session's governance (policy, confirmation broker, hooks, budget, redaction); built on first use. */
  get governance(): SessionGovernance {
    return this.governed().governance;
  }

  /** Tool specs the model sees: tools denied for every argument are hidden. */
  modelToolSpecs(): LlmToolSpec[] {
    return this.tools.modelSpecs();
  }

  /** The session's hook engine (REST and WebSocket hook registration). */
  /**
   * Set (or with undefined remove) the external budget host this session's guard consults. A WebSocket
   * host must be a connection of the session's tenant (registered with host_register). A webhook may call
   * private addresses only with `allowPrivateNetworks` (the caller's right, checked by the route).
   */
  setBudgetHost(endpoint: BudgetHostEndpoint | undefined, allowPrivateNetworks = false): void {
    this.assertOpen();
    if (endpoint?.type === 'websocket') {
      const binding = this.deps.governance.hostRegistry.bindingOf(endpoint.connectionId);
      if (!binding || binding.tenantId !== this.config.ownerTenantId) {
        throw new CodeError('VALIDATION_ERROR', 'body.connectionId: no host connection of this tenant has this id; send {"type":"host_register"} on an events WebSocket first', { field: 'connectionId' });
      }
    }
    this.governed().budget.setHost(endpoint ? budgetHostGuard(endpoint, this.config, this.deps.hostEnv, this.deps.governance, allowPrivateNetworks) : undefined);
  }

  get hooks(): HookEngine {
    return this.governed().hooks;
  }

  /** Tell session_start hooks; only sessions with hooks build their engine for it (idle sessions stay small). */
  notifyStart(): void {
    if (this.deps.governance.configHooks.length === 0 && !this.config.options.hooks?.length) return;
    this.hooks.observe('session_start', { session_id: this.id, workspace: this.config.workspace, model: this.config.model.id, labels: this.config.labels }, { sessionId: this.id });
  }

  /** Provider calls made by this session (all through its one LLM invoker). */
  get llmCallCount(): number {
    return this.llm.callCount;
  }

  /** Pending human confirmations. */
  pendingConfirmations(): PendingConfirmation[] {
    return this.governanceParts?.governance.broker.list() ?? [];
  }

  /** Answer a pending confirmation (404 unknown, 409 already settled or digest mismatch). */
  answerConfirmation(toolId: string, answer: { approved: boolean; reason?: string; argsDigest?: string }): PendingConfirmation {
    this.assertOpen();
    return this.governance.broker.answer(toolId, answer);
  }

  /** Note activity now. */
  touch(): void {
    this.lastActivityMs = this.deps.hostEnv.now();
  }

  /** True once closed. */
  get isClosed(): boolean {
    return this.lifecycle.isClosed;
  }

  /** The active run's id, if any. */
  get activeRunId(): string | undefined {
    return this.flight.runId;
  }

  /** A copy of the transcript. */
  history(): ChatMessage[] {
    return [...this.transcript.messages];
  }

  /** Accumulated token usage. */
  totalUsage(): Usage {
    return { ...this.transcript.usage };
  }

  /** Run records, oldest first. */
  listRuns(): RunRecord[] {
    return this.runs.list();
  }

  /** One run record. */
  getRun(runId: string): RunRecord {
    return this.runs.require(runId);
  }

  /** A stored artifact. */
  getArtifact(id: string): Artifact | undefined {
    return this.artifacts.get(id);
  }

  /** The bound that evicted an artifact (when it was evicted recently by this process), else undefined. */
  artifactEvictedBy(id: string): string | undefined {
    return this.artifacts.evictedBy(id);
  }

  /** Throw SESSION_CLOSED when closed. */
  assertOpen(): void {
    this.lifecycle.assertOpen(this.id);
  }

  /**
   * Admit a run (single flight): fails at once with SESSION_BUSY while another run is active, before the
   * transcript is read. With a known idempotency key, returns the existing run instead.
   */
  /** The run an earlier request started with this Idempotency-Key, if any (still running or ended). */
  runForIdempotencyKey(key: string): RunHandle | undefined {
    const existing = this.runs.byIdempotencyKey(key);
    if (!existing) return undefined;
    const done = this.flight.doneOf(existing.runId) ?? Promise.resolve(existing);
    return { record: this.runs.withCounts(existing), done: done.then((r) => this.runs.withCounts(r)), existing: true };
  }

  startRun(request: RunRequest): RunHandle {
    this.assertOpen();
    const existing = request.idempotencyKey !== undefined ? this.runForIdempotencyKey(request.idempotencyKey) : undefined;
    if (existing) return existing;
    this.flight.assertFree(this.id);
    const runId = this.deps.hostEnv.newId('run');
    const record = this.runs.create(runId, request);
    const active = this.flight.take(runId, record);
    this.deps.ownership.setActiveRun(this.id, runId);
    const { signal } = active.controller;
    // A child's run is cancelled with the call that delegated it.
    const unlink = request.parentSignal ? linkAbort(request.parentSignal, active.controller) : undefined;
    const done = this.flight.track(active, produceRun(this.producerHost(), record, request, this.invocationContext(runId, signal, runId), signal), () => {
      unlink?.();
      this.touch();
      if (!this.lifecycle.abandoned) this.deps.ownership.setActiveRun(this.id, undefined);
    });
    return { record: { ...record }, done: done.then((r) => this.runs.withCounts(r)), existing: false };
  }

  /** Cancel the active run if it has this id; false when it is not active. */
  cancelRun(runId: string): boolean {
    const run = this.getRun(runId);
    return !isTerminal(run.status) && this.flight.abort(runId, new Error('cancelled'));
  }

  /** Cancel the active run (only when it has `runId`, if given); false when nothing matching runs. Never throws (seed `cancel()`/`cancelRun()`). */
  cancel(runId?: string): boolean {
    const active = this.flight.runId;
    if (active === undefined || (runId !== undefined && runId !== active)) return false;
    return this.cancelRun(active);
  }

  /** The active run's snapshot `{id, status}`, or null when idle (seed `currentRun()`). */
  currentRun(): { id: string; status: RunRecord['status'] } | null {
    const active = this.flight.runId;
    const run = active === undefined ? undefined : this.runs.get(active);
    return active === undefined ? null : { id: active, status: run?.status ?? 'created' };
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
    this.assertOpen();
    if (!this.registry.get(name)) throw new CodeError('TOOL_NOT_FOUND', `tool ${name} not found`, { tool: name });
    const callId = this.deps.hostEnv.newId('call');
    const controller = new AbortController();
    this.directCalls.add(controller);
    try {
      const ctx = this.invocationContext(callId, controller.signal, undefined);
      return await this.tools.invoker.invoke({ id: callId, name, args, origin, ...(confirmationInheritance ? { confirmationInheritance } : {}) }, ctx);
    } finally {
      this.directCalls.delete(controller);
    }
  }

  /** Wait until no run is active, at most `timeoutMs` (passivation lets a run finish before its deadline). */
  async waitIdle(timeoutMs: number): Promise<void> {
    await this.flight.waitIdle(timeoutMs);
  }

  /** Give the session up after another node took it over: stop work, save and publish nothing more. */
  async abandon(): Promise<void> {
    this.lifecycle.abandon();
    await this.close('lost');
  }

  /** Close: cancel in-flight work, wait for it to end, emit session_closed. Idempotent. */
  async close(reason = 'closed'): Promise<void> {
    if (!this.lifecycle.close(reason)) return;
    const closed = new Error('session closed');
    for (const controller of this.directCalls) controller.abort(closed);
    // Every child of the session stops at once (background ones included).
    this.tasks.cancelAll(closed);
    // A child shares its parent's broker and hooks: the parent settles and closes them.
    const owned = this.deps.childOf ? undefined : this.governanceParts;
    owned?.governance.broker.rejectAll('session closed');
    owned?.hooks.observe('session_end', { session_id: this.id, reason, labels: this.config.labels }, { sessionId: this.id });
    await this.flight.abortAndWait(closed);
    await this.tasks.closeChildren();
    this.emit(undefined, 'session_closed', { reason });
    await this.tools.closeMcp();
    // session_end was queued above: let queued observations finish (each is bounded by its timeoutMs), then close.
    const engine = owned?.hooks;
    if (engine) void engine.idle().finally(() => engine.close());
  }

  /** Record that a run in flight on a node that died is lost (status failed, error NODE_LOST). */
  markRunLost(runId: string, input: string): void {
    this.runs.markLost(runId, input);
  }

  /** Save one complete snapshot generation through the store; emits persistence_failed on failure. */
  /** session_sequence at the last saved generation (-1: never saved). */
  private savedAtSequence: number;

  /** True when this session was ever saved (its store holds a generation). */
  get saved(): boolean {
    return this.generation > 0;
  }

  async save(): Promise<number> {
    if (this.config.parentSessionId !== null) throw new CodeError('CHILD_SESSION', `session ${this.id} is a child of session ${this.config.parentSessionId}: its task is saved with the parent`, { parentSessionId: this.config.parentSessionId });
    this.generation += 1;
    const sequence = this.events.lastSequence;
    await saveSnapshot({ sessionId: this.id, store: this.deps.store, ownership: this.deps.ownership, emit: this.emit }, this.toSnapshot(this.generation));
    this.savedAtSequence = sequence;
    return this.generation;
  }

  /** True when something happened (any event) since the last saved generation, or it was never saved. */
  get dirty(): boolean {
    return this.events.lastSequence !== this.savedAtSequence;
  }

  /** The session as one SessionSnapshotV1 generation. */
  toSnapshot(generation = this.generation): SessionSnapshotV1 {
    const { config, transcript, createdAtMs, events } = this;
    return toSessionSnapshot({ generation, config, hostEnv: this.deps.hostEnv, transcript, createdAtMs, events, artifacts: this.artifacts.list(), runs: this.listRuns(), verifications: this.verifications.list(), subagentTasks: this.tasks.list(), ownMcpServers: this.tools.ownConfigs(), closed: this.lifecycle.closedByClient });
  }

  /** The session's workspace (canonical path). */
  get workspace(): string {
    return this.config.workspace;
  }

  /** Verification reports, oldest first. */
  listVerifications(): VerificationReport[] {
    return this.verifications.list();
  }

  /** Run verification commands through bash on the host-direct path and keep the report (no run lease). */
  async runVerification(request: VerificationRequest): Promise<VerificationReport> {
    this.assertOpen();
    const report = await this.verifications.run(request);
    await this.saveIfAutoSave();
    return report;
  }

  /** With autoSave, save now; a failure is reported (persistence_failed, onPersistenceError), not thrown. */
  private async saveIfAutoSave(): Promise<void> {
    if (this.config.autoSave) await this.save().catch((error: unknown) => this.deps.onPersistenceError?.(this.id, error));
  }

  /** Inject a host-supplied cluster event: subscribers see it and hooks observe it. */
  injectClusterEvent(type: 'budget_threshold_hit' | 'passivation_requested' | 'peer_invocation', payload: Record<string, unknown>): void {
    this.assertOpen();
    this.emit(this.flight.runId, type, payload as never);
    this.hooks.observe(type, { session_id: this.id, ...payload, labels: this.config.labels }, { sessionId: this.id });
  }

  private governed(): SessionGovernanceParts {
    this.governanceParts ??= this.deps.childOf?.governance ?? buildSessionGovernance(this.config, this.deps.hostEnv, this.deps.governance);
    return this.governanceParts;
  }

  /** The session's subagent tasks, oldest first. */
  listTasks(): SubagentTaskSnapshot[] {
    return this.tasks.list();
  }

  /** One subagent task (TASK_NOT_FOUND when the session has none of that id). */
  getTask(taskId: string): SubagentTaskSnapshot {
    return this.tasks.require(taskId);
  }

  /**
   * Run host-selected tasks (POST .../tasks, the seed's `session.task()` / `session.tasks()`): one `task` or
   * `parallel_task` call on the host-direct path; the children's own calls are governed as always.
   */
  async runHostTasks(request: TaskRequest): Promise<ToolCallOutcome> {
    const { name, args, inheritance } = hostTaskCall(request);
    return this.invokeToolDirect(name, args, 'host_direct', inheritance);
  }

  /** What the run producer uses of the session. */
  private producerHost(): RunProducerHost {
    const { config, deps, emit, runs, transcript, verifications } = this;
    return {
      config,
      hostEnv: deps.hostEnv,
      checkpoints: deps.checkpoints,
      emit,
      runs,
      transcript,
      verifications,
      governance: () => this.governed(),
      memory: this.memory,
      loopDeps: () => ({ llm: this.llm, tools: this.tools.invoker, toolSpecs: () => this.modelToolSpecs() }),
      keepsCheckpoints: () => this.lifecycle.keepsCheckpoints(),
      saveAfterRun: async () => {
        if (config.autoSave && this.lifecycle.savesAfterRun()) await this.save().catch((error: unknown) => deps.onPersistenceError?.(this.id, error));
      },
    };
  }

  private invocationContext(invocationId: string, signal: AbortSignal, runId: string | undefined): InvocationContext {
    const { workspace, governance } = this.config;
    return createInvocationContext({ runId: invocationId, sessionId: this.id, workspace, signal, emit: (type, payload) => this.emit(runId, type, payload), governance, hostEnv: this.deps.hostEnv });
  }
}

/** Defaults when the agent passes no delegation settings (embedders). */
const DEFAULT_DELEGATION = { limits: { maxDepth: 3, maxParallel: 8 }, inheritance: 'inherit_parent', keepFinishedChildren: 8 } as const;

/** The server's observer and the parent's, for a child session. */
function childObserver(server: SessionEventObserver | undefined, parent: SessionEventObserver): SessionEventObserver {
  return (type, payload) => {
    server?.(type, payload);
    parent(type, payload);
  };
}

import { CodeError } from '../../errors.js';
import type { ChatMessage } from '../../protocol/chat-message.js';
import type { AgentResult, RunRecord, Usage } from '../../protocol/run-record.js';
import type { RuntimeEventPayloads, RuntimeEventType } from '../../protocol/runtime-event.js';
import type { Artifact, SessionSnapshotV1 } from '../../protocol/session-snapshot.js';
import type { SessionStore } from '../../stores/session-store.js';
import { SessionEventLog } from '../events/session-event-log.js';
import type { HostEnv } from '../host-env.js';
import { createInvocationContext, type InvocationContext } from '../invocation/invocation-context.js';
import { LlmInvoker } from '../invocation/llm-invoker.js';
import { ToolInvoker, type ToolCallOutcome } from '../invocation/tool-invoker.js';
import { ConfirmationBroker, type PendingConfirmation } from '../policy/confirmation-broker.js';
import { isToolFullyDenied } from '../policy/permission-policy.js';
import type { BudgetGuard } from '../policy/budget/budget-decision.js';
import { BuiltinBudgetGuard } from '../policy/budget/builtin-budget-guard.js';
import { combineGuards } from '../policy/budget/combine-guards.js';
import { HostBudgetGuard } from '../policy/budget/host-budget-guard.js';
import { HookEngine } from '../policy/hooks/hook-engine.js';
import type { SharedGovernance } from '../policy/shared-governance.js';
import type { SessionGovernance } from '../policy/session-governance.js';
import type { LlmToolSpec } from '../llm/llm-provider.js';
import { fromCheckpoint, toCheckpoint } from '../loop/checkpoint-codec.js';
import { runLoop, type LoopOutcome, type LoopState } from '../loop/run-loop.js';
import type { LoopCheckpoint } from '../../protocol/loop-checkpoint.js';
import type { CheckpointStore } from '../../stores/checkpoint-store.js';
import type { SessionOwnership } from '../session-ownership.js';
import type { AnyToolDefinition } from '../tools/define-tool.js';
import { ToolRegistry, toolSpec } from '../tools/tool-registry.js';
import { layerMcpTools } from '../mcp/layered-mcp-tools.js';
import { McpManager } from '../mcp/mcp-manager.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import { toAgentResult } from './agent-result.js';
import type { VerificationPreset, VerificationReport, VerificationRequest } from '../../protocol/verification.js';
import type { ToolResult } from '../tools/define-tool.js';
import type { ToolCallRequest } from '../invocation/tool-call-state.js';
import { detectPresets, matchPreset } from '../verification/detect-presets.js';
import { reportForPresetRun } from '../verification/preset-report.js';
import { runVerification } from '../verification/run-verification.js';

/** The bash tool's default and maximum timeouts (ms), as its schema declares them. */
const BASH_DEFAULT_TIMEOUT_MS = 120_000;
const BASH_MAX_TIMEOUT_MS = 600_000;
/** Reports a session keeps (oldest dropped first). */
const MAX_VERIFICATION_REPORTS = 200;

/** What a session needs from the agent that owns it. */
export interface AgentSessionDeps {
  hostEnv: HostEnv;
  store: SessionStore;
  tools: readonly AnyToolDefinition[];
  /** Agent-wide governance services every session shares. */
  governance: SharedGovernance;
  /** Where loop checkpoints go after every tool round. */
  checkpoints: CheckpointStore;
  /** The agent-global MCP layer and its change counter. */
  mcp: SharedMcp;
  /** Who owns the session (a Redis lease in a cluster) and where its events are published. */
  ownership: SessionOwnership;
  /** Called when a background save fails (logged by the agent). */
  onPersistenceError?(sessionId: string, error: unknown): void;
}

/** A run request. */
export interface RunRequest {
  input: string;
  /** Side question: run on this history instead of the transcript, and leave the transcript unchanged. */
  history?: ChatMessage[];
  idempotencyKey?: string;
  /** Resume a run from its loop checkpoint (a new run id; the old run is named in metadata). */
  resumeFrom?: LoopCheckpoint;
}

/** The agent-global MCP layer as sessions see it. */
export interface SharedMcp {
  readonly global: McpManager;
  /** Bumped whenever the global layer's tools change. */
  version(): number;
  onLog?(sessionId: string, server: string, line: string): void;
}

/** An admitted (or, with an idempotency key, an existing) run. */
export interface RunHandle {
  record: RunRecord;
  /** Settles when the run's producer has ended (result recorded, autosave done, lease released). */
  done: Promise<RunRecord>;
  existing: boolean;
}

interface ActiveRun {
  runId: string;
  controller: AbortController;
  done: Promise<RunRecord>;
}

/** State restored from a snapshot. */
export interface RestoredState {
  messages: ChatMessage[];
  usage: Usage;
  createdAtMs: number;
  generation: number;
  runs: RunRecord[];
  artifacts: Artifact[];
  trace: SessionSnapshotV1['trace_events'];
  verifications: VerificationReport[];
  sessionSequence: number;
}

/**
 * One live session: its transcript, single-flight admission, runs and their event log, artifacts and
 * snapshots. Every transcript-affecting operation goes through `startRun`.
 */
export class AgentSession {
  readonly id: string;
  readonly events: SessionEventLog;
  readonly createdAtMs: number;
  private messages: ChatMessage[];
  private usage: Usage;
  private readonly runs = new Map<string, RunRecord>();
  private readonly idempotency = new Map<string, string>();
  private readonly artifacts = new Map<string, Artifact>();
  private verifications: VerificationReport[] = [];
  /** Preset reports being attached during the active run; the run awaits them before its result. */
  private pendingReports: Promise<void>[] = [];
  /** Verification presets of the workspace, detected on the first bash call of a run (cleared when the run ends). */
  private presets: Promise<VerificationPreset[]> | undefined;
  private active: ActiveRun | undefined;
  /** Host-direct calls in flight; close() aborts them. */
  private readonly directCalls = new Set<AbortController>();
  private closed = false;
  /** Why the session closed; a 'shutdown' keeps run checkpoints so the runs can be resumed. */
  private closeReason: string | undefined;
  /** Set when another node took the session over: nothing more is saved or published from here. */
  private abandoned = false;
  private generation: number;
  private updatedAtMs: number;
  private registryCache: ToolRegistry | undefined;
  private registryVersion = '';
  private mcpVersion = 0;
  private localMcp: McpManager | undefined;
  private readonly inheritedMcp: McpManager[] = [];
  private invokerCache: ToolInvoker | undefined;
  private governanceCache: SessionGovernance | undefined;
  private hookEngine: HookEngine | undefined;
  private budgetGuard: BudgetGuard | undefined;
  private specsCache: LlmToolSpec[] | undefined;
  private readonly llm: LlmInvoker;

  constructor(
    readonly config: ResolvedSessionConfig,
    private readonly deps: AgentSessionDeps,
    restored?: RestoredState,
  ) {
    this.id = config.sessionId;
    this.createdAtMs = restored?.createdAtMs ?? deps.hostEnv.now();
    this.updatedAtMs = this.createdAtMs;
    this.lastActivityMs = deps.hostEnv.now();
    this.messages = restored?.messages ?? [];
    this.usage = restored?.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
    this.generation = restored?.generation ?? 0;
    this.events = new SessionEventLog(
      { maxEventsPerRun: config.retention.maxEventsPerRun, maxRuns: config.retention.maxRuns, maxSessionEvents: config.retention.maxEventsPerRun },
      restored?.sessionSequence ?? 0,
    );
    for (const stored of restored?.runs ?? []) {
      // A run that was in flight when its snapshot was taken did not finish on that node.
      const run: RunRecord = isTerminal(stored.status) ? stored : { ...stored, status: 'failed', error: { code: 'NODE_LOST', message: 'the run was in flight when the session was last saved' } };
      this.runs.set(run.runId, run);
      if (run.idempotencyKey) this.idempotency.set(run.idempotencyKey, run.runId);
    }
    for (const artifact of restored?.artifacts ?? []) this.artifacts.set(artifact.id, artifact);
    this.verifications = restored?.verifications ?? [];
    if (restored) this.events.restore(restored.trace);
    this.llm = new LlmInvoker(config.model, () => this.governance);
  }

  /** The session's tools. */
  get registry(): ToolRegistry {
    // Rebuilt when any MCP layer changed: built-ins, then global, inherited and session servers (later shadow earlier).
    const version = `${this.deps.mcp.version()}:${this.mcpVersion}`;
    if (!this.registryCache || this.registryVersion !== version) {
      const layers = [this.deps.mcp.global, ...this.inheritedMcp, ...(this.localMcp ? [this.localMcp] : [])];
      this.registryCache = new ToolRegistry([...this.deps.tools, ...layerMcpTools(layers)]);
      this.registryVersion = version;
      this.specsCache = undefined;
    }
    return this.registryCache;
  }

  /** Every MCP layer of the session, outermost first: global, inherited (host-supplied), then its own. */
  mcpLayers(): McpManager[] {
    return [this.deps.mcp.global, ...this.inheritedMcp, this.mcp];
  }

  /** The session's own MCP servers (created on first use; closed with the session). */
  get mcp(): McpManager {
    if (!this.localMcp) {
      const manager = new McpManager({ source: 'session', now: () => this.deps.hostEnv.now(), defaultCwd: this.config.workspace, onLog: (server, line) => this.deps.mcp.onLog?.(this.id, server, line) });
      manager.onChange((change) => {
        this.mcpVersion += 1;
        this.emit(this.active?.runId, 'mcp_tools_changed', { server: change.server, reason: change.reason, tools: change.toolNames });
      });
      manager.onConnectionChange((change) => {
        if (change.connected) this.emit(this.active?.runId, 'mcp_server_connected', { server: change.server });
        else this.emit(this.active?.runId, 'mcp_server_disconnected', { server: change.server, reason: change.reason });
      });
      this.localMcp = manager;
    }
    return this.localMcp;
  }

  /** Attach host-supplied MCP servers as a read-only inherited layer (from SessionOptions.mcpServers). */
  attachInheritedMcp(manager: McpManager): void {
    this.inheritedMcp.push(manager);
    this.mcpVersion += 1;
  }

  /** The session's governance (policy, confirmation broker, hooks, budget, redaction); built on first use. */
  get governance(): SessionGovernance {
    if (!this.governanceCache) {
      const { hostEnv, governance } = this.deps;
      const hooks = new HookEngine({
        registry: governance.hostRegistry,
        configHooks: [...governance.configHooks, ...(this.config.options.hooks ?? [])],
        now: () => hostEnv.now(),
        newId: (prefix) => hostEnv.newId(prefix),
        workspace: this.config.workspace,
        onError: (failure) => governance.onHookError?.(this.id, failure),
      });
      const builtin = new BuiltinBudgetGuard({
        limits: this.config.options.budget ?? governance.defaultBudget,
        tenantId: this.config.ownerTenantId,
        tenantLedger: governance.tenantLedger,
        now: () => hostEnv.now(),
      });
      const host = this.config.options.budgetHost ?? governance.budgetHost;
      const budget: BudgetGuard = host
        ? combineGuards(
            builtin,
            new HostBudgetGuard({
              endpoint: { kind: 'webhook', url: host.url, ...(host.headers ? { headers: host.headers } : {}) },
              sessionId: this.id,
              tenantId: this.config.ownerTenantId,
              registry: governance.hostRegistry,
              timeoutMs: host.timeoutMs,
              now: () => hostEnv.now(),
              newId: (prefix) => hostEnv.newId(prefix),
            }),
          )
        : builtin;
      this.governanceCache = {
        permission: this.config.permissionPolicy,
        confirmation: this.config.confirmationPolicy,
        broker: new ConfirmationBroker(hostEnv),
        redactor: governance.redactor,
        hooks,
        budget,
      };
      this.hookEngine = hooks;
      this.budgetGuard = budget;
    }
    return this.governanceCache;
  }

  /** Tool specs the model sees: tools denied for every argument are hidden. */
  modelToolSpecs(): LlmToolSpec[] {
    this.specsCache ??= this.registry
      .list()
      .filter((tool) => !isToolFullyDenied(this.config.permissionPolicy, tool.name))
      .map(toolSpec);
    return this.specsCache;
  }

  private get toolInvoker(): ToolInvoker {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the invoker reads the current registry through a getter
    const self = this;
    this.invokerCache ??= new ToolInvoker({
      get registry() {
        return self.registry;
      },
      governance: this.governance,
      storeArtifact: (content, toolCallId, toolName) => this.storeArtifact(content, toolCallId, toolName),
      afterExecute: (call, args, result, startedAtMs, ctx) => this.attachPresetReport(call, args, result, startedAtMs, ctx),
    });
    return this.invokerCache;
  }

  /** The session's hook engine (REST and WebSocket hook registration). */
  get hooks(): HookEngine {
    void this.governance;
    return this.hookEngine as HookEngine;
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
    return this.governanceCache?.broker.list() ?? [];
  }

  /** Answer a pending confirmation (404 unknown, 409 already settled or digest mismatch). */
  answerConfirmation(toolId: string, answer: { approved: boolean; reason?: string; argsDigest?: string }): PendingConfirmation {
    this.assertOpen();
    return this.governance.broker.answer(toolId, answer);
  }

  /** Last time a request or run used the session (the idle reaper passivates old ones). */
  lastActivityMs = 0;

  /** Note activity now. */
  touch(): void {
    this.lastActivityMs = this.deps.hostEnv.now();
  }

  /** True once closed. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** The active run's id, if any. */
  get activeRunId(): string | undefined {
    return this.active?.runId;
  }

  /** A copy of the transcript. */
  history(): ChatMessage[] {
    return [...this.messages];
  }

  /** Accumulated token usage. */
  totalUsage(): Usage {
    return { ...this.usage };
  }

  /** Run records, oldest first. */
  listRuns(): RunRecord[] {
    return [...this.runs.values()].map((r) => this.withCounts(r));
  }

  /** One run record. */
  getRun(runId: string): RunRecord {
    const run = this.runs.get(runId);
    if (!run) throw new CodeError('RUN_NOT_FOUND', `run ${runId} not found in session ${this.id}`, { runId });
    return this.withCounts(run);
  }

  /** A stored artifact. */
  getArtifact(id: string): Artifact | undefined {
    return this.artifacts.get(id);
  }

  /** Throw SESSION_CLOSED when closed. */
  assertOpen(): void {
    if (this.closed) throw new CodeError('SESSION_CLOSED', `session ${this.id} is closed`, { sessionId: this.id });
  }

  /**
   * Admit a run (single flight): fails at once with SESSION_BUSY while another run is active, before the
   * transcript is read. With a known idempotency key, returns the existing run instead.
   */
  startRun(request: RunRequest): RunHandle {
    this.assertOpen();
    if (request.idempotencyKey !== undefined) {
      const existingId = this.idempotency.get(request.idempotencyKey);
      const existing = existingId ? this.runs.get(existingId) : undefined;
      if (existing) {
        const done = this.active?.runId === existing.runId ? this.active.done : Promise.resolve(existing);
        return { record: this.withCounts(existing), done: done.then((r) => this.withCounts(r)), existing: true };
      }
    }
    if (this.active) {
      throw new CodeError('SESSION_BUSY', `session ${this.id} is busy with run ${this.active.runId}`, { activeRunId: this.active.runId });
    }
    const runId = this.deps.hostEnv.newId('run');
    const record: RunRecord = {
      runId,
      sessionId: this.id,
      status: 'created',
      input: request.input,
      sideQuestion: request.resumeFrom ? request.resumeFrom.side_question : request.history !== undefined,
      createdAtMs: this.deps.hostEnv.now(),
      eventCount: 0,
      firstRetainedSequence: 0,
      ...(request.idempotencyKey !== undefined ? { idempotencyKey: request.idempotencyKey } : {}),
      ...(request.resumeFrom ? { metadata: { resumed_from_run_id: request.resumeFrom.run_id, resumed_from_turn: request.resumeFrom.turn } } : {}),
    };
    this.runs.set(runId, record);
    if (request.idempotencyKey !== undefined) this.idempotency.set(request.idempotencyKey, runId);
    this.trimRuns();
    const controller = new AbortController();
    const active: ActiveRun = { runId, controller, done: Promise.resolve(record) };
    this.active = active;
    this.deps.ownership.setActiveRun(this.id, runId);
    active.done = this.produce(record, request, controller).finally(() => {
      if (this.active === active) this.active = undefined;
      this.touch();
      if (!this.abandoned) this.deps.ownership.setActiveRun(this.id, undefined);
    });
    return { record: { ...record }, done: active.done.then((r) => this.withCounts(r)), existing: false };
  }

  /** Cancel the active run if it has this id; false when it is not active. */
  cancelRun(runId: string): boolean {
    const run = this.getRun(runId);
    if (this.active?.runId !== runId || isTerminal(run.status)) return false;
    this.active.controller.abort(new Error('cancelled'));
    return true;
  }

  /**
   * Run one tool call from the host (no lease, no model); events carry no run id. `host_direct` skips the
   * permission and confirmation decisions; `governed_direct` applies them in full.
   */
  async invokeToolDirect(name: string, args: unknown, origin: 'host_direct' | 'governed_direct' = 'host_direct'): Promise<ToolCallOutcome> {
    this.assertOpen();
    if (!this.registry.get(name)) throw new CodeError('TOOL_NOT_FOUND', `tool ${name} not found`, { tool: name });
    const callId = this.deps.hostEnv.newId('call');
    const controller = new AbortController();
    this.directCalls.add(controller);
    try {
      const ctx = this.invocationContext(callId, controller.signal, undefined);
      return await this.toolInvoker.invoke({ id: callId, name, args, origin }, ctx);
    } finally {
      this.directCalls.delete(controller);
    }
  }

  /** Runs stopped by shutdown, passivation or a lost lease keep their checkpoints: another process or node resumes them. */
  private keepsCheckpoints(): boolean {
    return this.closeReason === 'shutdown' || this.closeReason === 'passivated' || this.closeReason === 'lost';
  }

  /** Wait until no run is active, at most `timeoutMs` (passivation lets a run finish before its deadline). */
  async waitIdle(timeoutMs: number): Promise<void> {
    const active = this.active;
    if (!active) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([active.done.catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  }

  /** Give the session up after another node took it over: stop work, save and publish nothing more. */
  async abandon(): Promise<void> {
    this.abandoned = true;
    await this.close('lost');
  }

  /** Close: cancel in-flight work, wait for it to end, emit session_closed. Idempotent. */
  async close(reason = 'closed'): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closeReason = reason;
    for (const controller of this.directCalls) controller.abort(new Error('session closed'));
    this.governanceCache?.broker.rejectAll('session closed');
    this.hookEngine?.observe('session_end', { session_id: this.id, reason, labels: this.config.labels }, { sessionId: this.id });
    const active = this.active;
    if (active) {
      active.controller.abort(new Error('session closed'));
      await active.done.catch(() => undefined);
    }
    this.emit(undefined, 'session_closed', { reason });
    // The session owns its own and its inherited managers (the host supplied their configuration for this session only).
    await Promise.all([this.localMcp, ...this.inheritedMcp].map((m) => m?.close().catch(() => undefined)));
    // session_end was queued above: let queued observations finish (each is bounded by its timeoutMs), then close.
    const engine = this.hookEngine;
    if (engine) void engine.idle().finally(() => engine.close());
  }

  /** Record that a run in flight on a node that died is lost (status failed, error NODE_LOST). */
  markRunLost(runId: string, input: string): void {
    const existing = this.runs.get(runId);
    if (existing && isTerminal(existing.status)) return;
    const record: RunRecord = existing ?? { runId, sessionId: this.id, status: 'executing', input, sideQuestion: false, createdAtMs: this.deps.hostEnv.now(), eventCount: 0, firstRetainedSequence: 0 };
    this.runs.set(runId, record);
    record.error = { code: 'NODE_LOST', message: 'the node running this run was lost' };
    record.endedAtMs = this.deps.hostEnv.now();
    this.setStatus(record, 'failed');
    this.emit(runId, 'error', { code: 'NODE_LOST', message: `run ${runId} failed: node_lost` });
  }

  /** Save one complete snapshot generation through the store; emits persistence_failed on failure. */
  async save(): Promise<number> {
    this.generation += 1;
    const snapshot = this.toSnapshot(this.generation);
    try {
      try {
        await this.deps.store.save(snapshot);
      } catch (error) {
        // Refused by the lease fence: retry once if the lease could be renewed or safely retaken.
        if (!(error instanceof CodeError && error.details.reason === 'fenced' && (await this.deps.ownership.fenced(this.id)))) throw error;
        await this.deps.store.save(snapshot);
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.emit(undefined, 'persistence_failed', { code: error instanceof CodeError ? error.code : 'PERSISTENCE_FAILED', message });
      throw error instanceof CodeError ? error : new CodeError('PERSISTENCE_FAILED', `saving session ${this.id} failed`, { sessionId: this.id });
    }
    return this.generation;
  }

  /** The session as one SessionSnapshotV1 generation. */
  toSnapshot(generation = this.generation): SessionSnapshotV1 {
    return {
      schema_version: 1,
      generation,
      saved_at_ms: this.deps.hostEnv.now(),
      session: {
        id: this.id,
        ownerTenantId: this.config.ownerTenantId,
        workspace: this.config.workspace,
        model: this.config.model.id,
        options: this.config.options,
        labels: this.config.labels,
        messages: this.messages,
        usage: this.usage,
        createdAtMs: this.createdAtMs,
        updatedAtMs: this.updatedAtMs,
        sessionSequence: this.events.lastSequence,
        ...('issued' in this.deps.hostEnv && typeof this.deps.hostEnv.issued === 'number' ? { idCounter: this.deps.hostEnv.issued } : {}),
      },
      artifacts: [...this.artifacts.values()],
      trace_events: this.events.retained(this.config.retention.maxTraceEvents),
      run_records: this.listRuns(),
      verification_reports: [...this.verifications],
      subagent_tasks: [],
    };
  }

  private async produce(record: RunRecord, request: RunRequest, controller: AbortController): Promise<RunRecord> {
    const ctx = this.invocationContext(record.runId, controller.signal, record.runId);
    this.emit(record.runId, 'agent_start', { input: request.input, model: this.config.model.id, side_question: record.sideQuestion });
    this.setStatus(record, 'executing');
    const governance = this.governance;
    const budget = this.budgetGuard;
    budget?.startClock?.();
    let input = request.input;
    let outcome: LoopOutcome | undefined;
    // pre_prompt hooks may block the run or rewrite the input (fail closed, like every gating hook).
    const gate = await governance.hooks?.gate('pre_prompt', { session_id: this.id, run_id: record.runId, prompt: input, labels: this.config.labels }, { sessionId: this.id }, controller.signal);
    if (gate && gate.action !== 'continue') {
      outcome = failedOutcome('BLOCKED_BY_HOOK', `the prompt was ${gate.action === 'block' ? 'blocked' : 'skipped'} by pre_prompt hook${gate.hookId ? ` ${gate.hookId}` : ''}${gate.reason ? `: ${gate.reason}` : ''}`);
    } else if (gate?.modifiedPayload && typeof gate.modifiedPayload.prompt === 'string') {
      input = gate.modifiedPayload.prompt;
    }
    const userMessage: ChatMessage = { role: 'user', content: input };
    const resume = request.resumeFrom;
    // A resumed run starts from the checkpoint's working transcript: [system, ...history, user, ...rounds].
    const before = resume ? resume.messages.slice(1) : [...(request.history ?? this.messages), userMessage];
    if (!outcome) {
      if (resume) this.emit(record.runId, 'run_resumed', { from_run_id: resume.run_id, turn: resume.turn });
      const transcript: ChatMessage[] = [{ role: 'system', content: this.config.systemPrompt }, ...before];
      const deps = { llm: this.llm, tools: this.toolInvoker, toolSpecs: () => this.modelToolSpecs(), checkpoint: (state: LoopState) => this.saveCheckpoint(record, input, state) };
      try {
        outcome = await runLoop(deps, ctx, transcript, resume ? fromCheckpoint(resume) : undefined);
      } catch (error) {
        outcome = failedOutcome('INTERNAL_ERROR', error instanceof Error ? error.message : String(error));
      }
      // A run stopped by server shutdown keeps its checkpoint: another process (or node) can resume it.
      if (!this.keepsCheckpoints()) {
        await this.deps.checkpoints.delete(record.runId).catch(() => undefined);
        // The resumed run's own checkpoints replaced the one it started from.
        if (resume) await this.deps.checkpoints.delete(resume.run_id).catch(() => undefined);
      }
    }
    budget?.stopClock?.();
    await Promise.all(this.pendingReports.splice(0));
    this.presets = undefined;
    if (outcome.status === 'failed' && outcome.error) {
      governance.hooks?.observe('on_error', { session_id: this.id, run_id: record.runId, error_type: outcome.error.code, error_message: outcome.error.message, labels: this.config.labels }, { sessionId: this.id });
    }
    if (!record.sideQuestion) this.messages = resume ? [...before, ...outcome.added] : [...this.messages, userMessage, ...outcome.added];
    this.usage = {
      promptTokens: this.usage.promptTokens + outcome.usage.promptTokens,
      completionTokens: this.usage.completionTokens + outcome.usage.completionTokens,
      totalTokens: this.usage.totalTokens + outcome.usage.totalTokens,
    };
    this.updatedAtMs = this.deps.hostEnv.now();
    const result: AgentResult = toAgentResult(outcome, this.verifications.filter((r) => r.run_id === record.runId));
    record.result = result;
    if (outcome.error) {
      record.error = outcome.error;
      if (outcome.status === 'failed') this.emit(record.runId, 'error', outcome.error);
    }
    record.endedAtMs = this.deps.hostEnv.now();
    this.setStatus(record, outcome.status);
    this.emit(record.runId, 'agent_end', {
      status: outcome.status,
      text: result.text,
      tool_calls_count: result.toolCallsCount,
      usage: { prompt_tokens: result.promptTokens, completion_tokens: result.completionTokens, total_tokens: result.totalTokens },
      verification_status: result.verificationStatus,
      pending_verification_count: result.pendingVerificationCount,
      failed_verification_count: result.failedVerificationCount,
      verification_report_count: result.verificationReportCount,
      verification_summary_text: result.verificationSummaryText,
      ...(outcome.error ? { error: outcome.error } : {}),
    });
    if (this.config.autoSave && !this.abandoned && (!this.closed || this.closeReason === 'shutdown' || this.closeReason === 'passivated')) {
      await this.save().catch((error: unknown) => this.deps.onPersistenceError?.(this.id, error));
    }
    return record;
  }

  /** The session's workspace (canonical path). */
  get workspace(): string {
    return this.config.workspace;
  }

  /** Verification reports, oldest first. */
  listVerifications(): VerificationReport[] {
    return [...this.verifications];
  }

  /** Run verification commands through bash on the host-direct path and keep the report (no run lease). */
  async runVerification(request: VerificationRequest): Promise<VerificationReport> {
    this.assertOpen();
    this.emit(undefined, 'verification_started', { subject: request.subject, commands: request.commands.length });
    const report = await runVerification(request, {
      sessionId: this.id,
      now: () => this.deps.hostEnv.now(),
      newId: (prefix) => this.deps.hostEnv.newId(prefix),
      maxTimeoutMs: BASH_MAX_TIMEOUT_MS,
      runCommand: async (command, timeoutMs) => {
        const outcome = await this.invokeToolDirect('bash', { command, timeout: timeoutMs }, 'host_direct');
        // The tail of the output matters for a verdict: read it from the artifact when the result was cut.
        const full = outcome.artifactId ? this.artifacts.get(outcome.artifactId)?.content : undefined;
        return { output: full ?? outcome.output, exitCode: outcome.exitCode, timedOut: outcome.metadata?.timed_out === true, truncated: full === undefined && outcome.truncated };
      },
    });
    this.addVerification(report);
    if (this.config.autoSave) await this.save().catch((error: unknown) => this.deps.onPersistenceError?.(this.id, error));
    return report;
  }

  private addVerification(report: VerificationReport): void {
    this.verifications.push(report);
    if (this.verifications.length > MAX_VERIFICATION_REPORTS) this.verifications.splice(0, this.verifications.length - MAX_VERIFICATION_REPORTS);
    this.emit(report.run_id ?? undefined, 'verification_completed', { report_id: report.id, subject: report.subject, status: report.status, failed_required: report.summary.required_failed });
  }

  /** A model's bash call that runs one of the workspace's verification presets attaches a report to the run. */
  private attachPresetReport(call: ToolCallRequest, args: unknown, result: ToolResult, startedAtMs: number, ctx: InvocationContext): void {
    if (call.origin === 'host_direct' || call.name.toLowerCase() !== 'bash' || !this.active || this.active.runId !== ctx.runId) return;
    const command = typeof (args as { command?: unknown }).command === 'string' ? (args as { command: string }).command : '';
    const timeoutMs = typeof (args as { timeout?: unknown }).timeout === 'number' ? (args as { timeout: number }).timeout : BASH_DEFAULT_TIMEOUT_MS;
    this.presets ??= detectPresets(this.config.workspace).catch(() => []);
    const runId = ctx.runId;
    const pending = this.presets.then((presets) => {
      const preset = matchPreset(command, presets);
      if (!preset) return;
      const now = this.deps.hostEnv.now();
      this.addVerification(
        reportForPresetRun(
          preset,
          { output: result.output, exitCode: result.exitCode, timedOut: result.metadata?.timed_out === true, truncated: false, startedAtMs, durationMs: Math.max(0, now - startedAtMs), timeoutMs },
          { newId: (prefix) => this.deps.hostEnv.newId(prefix), sessionId: this.id, runId },
        ),
      );
    });
    this.pendingReports.push(pending);
  }

  /** Save the loop state after a completed tool round; a failure is reported, never fatal to the run. */
  private async saveCheckpoint(record: RunRecord, input: string, state: LoopState): Promise<void> {
    const checkpoint = toCheckpoint(state, { runId: record.runId, sessionId: this.id, input, sideQuestion: record.sideQuestion, now: this.deps.hostEnv.now() });
    try {
      await this.deps.checkpoints.save(checkpoint);
      this.emit(record.runId, 'checkpoint_saved', { turn: state.turn, store: this.deps.checkpoints.kind });
    } catch (error) {
      this.emit(record.runId, 'persistence_failed', { code: error instanceof CodeError ? error.code : 'PERSISTENCE_FAILED', message: `checkpoint of run ${record.runId}: ${error instanceof Error ? error.message : String(error)}` });
    }
  }

  private setStatus(record: RunRecord, to: RunRecord['status']): void {
    const from = record.status;
    if (from === to || isTerminal(from)) return;
    record.status = to;
    this.emit(record.runId, 'run_status_changed', { from, to });
  }

  private invocationContext(invocationId: string, signal: AbortSignal, runId: string | undefined): InvocationContext {
    return createInvocationContext({
      runId: invocationId,
      sessionId: this.id,
      workspace: this.config.workspace,
      signal,
      emit: (type, payload) => this.emit(runId, type, payload),
      governance: this.config.governance,
      hostEnv: this.deps.hostEnv,
    });
  }

  private emit<T extends RuntimeEventType>(runId: string | undefined, type: T, payload: RuntimeEventPayloads[T]): void {
    const labels = this.config.labels;
    const stamped = this.events.append({
      version: 1,
      type,
      payload: payload as unknown as Record<string, unknown>,
      metadata: {
        ...(runId !== undefined ? { run_id: runId } : {}),
        session_id: this.id,
        timestamp_ms: this.deps.hostEnv.now(),
        ...(labels.tenantId !== undefined ? { tenant_id: labels.tenantId } : {}),
        ...(labels.principal !== undefined ? { principal: labels.principal } : {}),
        ...(labels.agentTemplateId !== undefined ? { agent_template_id: labels.agentTemplateId } : {}),
        ...(labels.correlationId !== undefined ? { correlation_id: labels.correlationId } : {}),
      },
    });
    // In a cluster the event also goes to the session's Redis stream, for subscribers on other nodes.
    if (this.deps.ownership.clustered && !this.abandoned) this.deps.ownership.publish(this.id, stamped);
  }

  /** Inject a host-supplied cluster event: subscribers see it and hooks observe it. */
  injectClusterEvent(type: 'budget_threshold_hit' | 'passivation_requested' | 'peer_invocation', payload: Record<string, unknown>): void {
    this.assertOpen();
    this.emit(this.active?.runId, type, payload as never);
    this.hooks.observe(type, { session_id: this.id, ...payload, labels: this.config.labels }, { sessionId: this.id });
  }

  private storeArtifact(content: string, toolCallId: string, toolName: string): string {
    const id = this.deps.hostEnv.newId('art');
    this.artifacts.set(id, { id, toolCallId, toolName, createdAtMs: this.deps.hostEnv.now(), content });
    return id;
  }

  private withCounts(record: RunRecord): RunRecord {
    const counts = this.events.runCounts(record.runId);
    return { ...record, eventCount: Math.max(record.eventCount, counts.total), firstRetainedSequence: counts.firstRetained };
  }

  private trimRuns(): void {
    const max = this.config.retention.maxRuns;
    if (this.runs.size <= max) return;
    for (const [runId, run] of this.runs) {
      if (this.runs.size <= max) break;
      if (isTerminal(run.status)) {
        this.runs.delete(runId);
        if (run.idempotencyKey) this.idempotency.delete(run.idempotencyKey);
        this.events.dropRun(runId);
      }
    }
  }
}

function failedOutcome(code: string, message: string): LoopOutcome {
  return { status: 'failed', text: '', toolCallsCount: 0, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, added: [], error: { code, message } };
}

function isTerminal(status: RunRecord['status']): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

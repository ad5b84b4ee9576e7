import { EMPTY_COMMAND_CATALOG } from '../commands/command-catalog.js';
import { runCompactCommand } from '../commands/compact-command.js';
import { AutoCompactor } from '../compaction/auto-compactor.js';
import type { CompactionDeps } from '../compaction/compact-transcript.js';
import { SessionSlashCommands } from '../commands/session-slash-commands.js';
import type { SubagentTasks } from '../delegation/subagent-tasks.js';
import { SessionEventLog } from '../events/session-event-log.js';
import { createInvocationContext } from '../invocation/invocation-context.js';
import { LlmInvoker } from '../invocation/llm-invoker.js';
import type { ToolInvokerDeps } from '../invocation/tool-call-state.js';
import type { AgentMemory } from '../memory/agent-memory.js';
import { openAgentMemory, processMemoryStores } from '../memory/memory-stores.js';
import { SessionCommands, UNSANDBOXED } from '../sandbox/session-commands.js';
import { sandboxUsageKey } from '../quotas/sandbox-usage-key.js';
import { resolveQueueSettings } from '../queue/queue-settings.js';
import { SessionQueue } from '../queue/session-queue.js';
import type { RunRecord } from '../../protocol/run-record.js';
import type { AgentSessionDeps, RestoredState } from './agent-session-deps.js';
import { childObserver } from './child-observer.js';
import { HostDirectCalls } from './host-direct-calls.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import { SessionArtifacts } from './session-artifacts.js';
import { buildSessionDelegation } from './session-delegation-factory.js';
import { createSessionEmit, type SessionEmit } from './session-emitter.js';
import { SessionGovernanceAccess } from './session-governance-access.js';
import { SessionLifecycle } from './session-lifecycle.js';
import type { RunProducerHost } from './run-producer.js';
import { SessionRunControl } from './session-run-control.js';
import { SessionRuns } from './session-runs.js';
import { SessionSaves } from './session-saves.js';
import { restoredRun } from './session-snapshot-codec.js';
import { SessionTools } from './session-tools.js';
import { SessionTranscript } from './session-transcript.js';
import { SessionVerifications } from './session-verifications.js';
import { SingleFlight } from './single-flight.js';
import { runCheckpoints } from '../../stores/checkpoint-store.js';
import type { SessionKey } from '../../stores/session-key.js';

/** The parts one live session is made of, wired to each other. */
export interface SessionParts {
  readonly events: SessionEventLog;
  readonly transcript: SessionTranscript;
  readonly emit: SessionEmit;
  /** The single-flight lease: at most one active run. */
  readonly flight: SingleFlight;
  readonly lifecycle: SessionLifecycle;
  readonly saves: SessionSaves;
  readonly governance: SessionGovernanceAccess;
  readonly runs: SessionRuns;
  readonly runControl: SessionRunControl;
  readonly artifacts: SessionArtifacts;
  readonly verifications: SessionVerifications;
  readonly tasks: SubagentTasks;
  /** Where the session's model-chosen commands run. */
  readonly commands: SessionCommands;
  readonly tools: SessionTools;
  readonly directCalls: HostDirectCalls;
  readonly llm: LlmInvoker;
  readonly memory: AgentMemory | undefined;
  /** The lane queue (SessionOptions.queueConfig); undefined for an ordinary session, which pays nothing for it. */
  readonly queue: SessionQueue | undefined;
  /** The session's slash commands (`/name args` runs in place of the model). */
  slashCommands(): SessionSlashCommands;
}

/** What the parts need of the session that holds them. */
export interface SessionPartsHost {
  /** The session's key (tenant and id): its store, lease, stream and checkpoint keys. */
  readonly key: SessionKey;
  /** When the session was created (restored, or now). */
  readonly createdAtMs: number;
  /** Note activity now (a run just ended). */
  touch(): void;
}

/** Build and wire the parts of one session from its configuration, the agent's services and, on restore, its snapshot's state. */
export function buildSessionParts(config: ResolvedSessionConfig, deps: AgentSessionDeps, restored: RestoredState | undefined, host: SessionPartsHost): SessionParts {
  const { hostEnv, mcp } = deps;
  const sessionId = config.sessionId;
  const flight = new SingleFlight();
  const lifecycle = new SessionLifecycle();
  const transcript = new SessionTranscript(host.createdAtMs, restored?.messages, restored?.usage);
  const { retention } = config;
  const events = new SessionEventLog({ maxEventsPerRun: retention.maxEventsPerRun, maxRuns: retention.maxRuns, maxSessionEvents: retention.maxEventsPerRun }, restored?.sessionSequence ?? 0);
  // What the parts below share: the session's identity, workspace, clock and active run. Each part's deps
  // are written out field by field, not spread from a shared object: V8 gives an object spread from one
  // holding closures a hidden class of its own, so every session paid for four more maps.
  const workspace = config.workspace;
  const activeRunId = () => flight.runId;
  // A child's events are also seen by its parent's delegation (progress, forwarded asks).
  const child = deps.childOf;
  const onEvent = child ? childObserver(deps.onEvent, child.observe) : deps.onEvent;
  const emit = createSessionEmit({ sessionId, hostEnv, sessionKey: host.key, labels: config.labels, events, ownership: deps.ownership, abandoned: () => lifecycle.abandoned, onEvent });
  // Created before the trace is restored: a restored session starts as saved at the sequence it was read at.
  const quotas = deps.quotas;
  const tenantId = config.ownerTenantId;
  const saves = new SessionSaves(
    {
      sessionId,
      sessionKey: host.key,
      store: deps.store,
      ownership: deps.ownership,
      emit,
      config,
      events,
      lifecycle,
      source: () => snapshotSource(),
      reportError: (error) => deps.onPersistenceError?.(sessionId, error),
      ...(quotas ? { onStored: (bytes: number) => quotas.recordStored(tenantId, sessionId, bytes) } : {}),
    },
    restored,
  );
  const governance = new SessionGovernanceAccess(config, hostEnv, deps.governance, child?.governance, restored?.permissionGrants);
  const runs = new SessionRuns({ sessionId, hostEnv, maxRuns: retention.maxRuns, events, emit }, (restored?.runs ?? []).map(restoredRun));
  const artifacts = new SessionArtifacts(hostEnv, { maxArtifacts: retention.maxArtifacts, maxBytes: retention.maxArtifactBytes }, restored?.artifacts);
  const verifications = new SessionVerifications(
    {
      sessionId,
      workspace: config.workspaceDir,
      hostEnv,
      activeRunId,
      invokeToolDirect: (name: string, args: unknown) => directCalls.invoke(name, args, 'host_direct'),
      getArtifact: (id: string) => artifacts.get(id),
      emit,
    },
    restored?.verifications,
  );
  const storeArtifact = (content: string, toolCallId: string, toolName: string) => artifacts.store(content, toolCallId, toolName);
  // Wired on first delegation: a session that never delegates keeps none of it.
  const { tasks, delegation } = buildSessionDelegation(config, deps, restored?.subagentTasks, () => ({
    emit,
    activeRunId: () => flight.runId,
    parent: { config, hostEnv, governanceParts: () => governance.parts(), mcpLayers: () => tools.layers() },
    storeArtifact,
  }));
  const queueConfig = config.options.queueConfig;
  const queue = queueConfig ? new SessionQueue(sessionId, resolveQueueSettings(queueConfig), hostEnv, { lostTasks: restored?.externalTasks ?? [], interrupted: () => lifecycle.keepsCheckpoints() }) : undefined;
  const sandbox = deps.sandbox ?? UNSANDBOXED;
  // The session's $HOME is keyed by tenant and session; the disk its commands use counts in the tenant's stored bytes.
  const commands = new SessionCommands(sandbox, { tenantId, sessionId, ...config.commands, workspace: config.workspaceDir, ...(quotas ? { onStored: (bytes: number) => quotas.recordStored(tenantId, sandboxUsageKey(sessionId), bytes) } : {}) });
  const invokerDeps = (): ToolInvokerDeps => ({
    governance: governance.parts().governance,
    storeArtifact,
    afterExecute: (call, args, result, startedAtMs, ctx) => verifications.attachPresetReport(call, args, result, startedAtMs, ctx),
    commands,
    workspace: config.workspaceDir,
    // A root server's sandbox.run_as owns what the file tools create, so its commands can edit it (and nothing is root's).
    ...(sandbox.runAs ? { fileOwner: sandbox.runAs } : {}),
    // The web tools' access: a reference to the operator's settings, built with the invoker (first call).
    web: { settings: config.web },
    delegation,
    ...(queue ? { queue } : {}),
  });
  const tools = new SessionTools({ sessionId, workspace, hostEnv, activeRunId, globalMcp: mcp.global, globalMcpVersion: () => mcp.version(), onMcpLog: (server: string, line: string) => mcp.onLog?.(sessionId, server, line), permissionPolicy: config.permissionPolicy, permissionFloor: config.permissionFloor, agentPermissions: config.permissionBounds, builtins: deps.tools, skills: config.skills, emit, invokerDeps, mcpLauncher: commands.forOrigin('host_direct'), mcpAllowPrivate: config.outboundAllowPrivate });
  for (const manager of child?.borrowedMcp ?? []) tools.borrow(manager);
  if (restored) events.restore(restored.trace);
  if (config.workspaceRepinned) emit(undefined, 'workspace_warning', { kind: 'repinned', workspace, message: config.workspaceRepinned });
  for (const file of config.workspaceSkipped ?? []) emit(undefined, 'workspace_warning', { kind: 'skipped', workspace, message: file.message, path: file.path });
  const llm = new LlmInvoker(() => config.model, () => governance.parts().governance);
  // Memory events belong to the active run when there is one (the context provider), else to the session.
  const memory = openAgentMemory(config.memory, config.ownerTenantId, deps.memoryStores ?? processMemoryStores(), hostEnv, (type, payload) => emit(flight.runId, type, payload));
  /** An invocation context of the session; its events belong to `runId` (none for a host-direct call). */
  const context = (invocationId: string, signal: AbortSignal, runId: string | undefined) =>
    createInvocationContext({ runId: invocationId, sessionId, workspace: config.workspace, signal, emit: (type, payload) => emit(runId, type, payload), governance: config.governance, hostEnv });
  // Built on the first host-direct call (most sessions never get one).
  const directCalls = new HostDirectCalls(() => ({ hostEnv, assertOpen: () => lifecycle.assertOpen(sessionId), hasTool: (name) => Boolean(tools.registry.get(name)), context: (callId, signal) => context(callId, signal, undefined), invoker: () => tools.invoker }));
  // What a compaction calls: the one LLM invoker and the session's hooks (the governance is built on first use).
  // Both are built by the first compaction or autoCompact run (most sessions never have one).
  let compactionCache: CompactionDeps | undefined;
  const compaction = (): CompactionDeps => (compactionCache ??= { llm, hooks: () => governance.parts().governance.hooks });
  let autoCompactor: AutoCompactor | undefined;
  const compactDep = () => {
    const compactor = (autoCompactor ??= new AutoCompactor(compaction()));
    return { compact: compactor.compact.bind(compactor) };
  };
  const producer = (): RunProducerHost => ({
    config,
    hostEnv,
    checkpoints: runCheckpoints(deps.checkpoints, host.key),
    emit,
    runs,
    transcript,
    verifications,
    memory,
    governance: () => governance.parts(),
    loopDeps: () => ({ llm, tools: tools.invoker, toolSpecs: () => tools.modelSpecs(), ...(config.governance.autoCompact ? compactDep() : {}) }),
    keepsCheckpoints: () => lifecycle.keepsCheckpoints(),
    saveAfterRun: () => saves.saveAfterRun(),
  });
  // Built on the first command (an input starting with "/", or the commands routes): most sessions never see one.
  let slashCommandsCache: SessionSlashCommands | undefined;
  const slashCommands = (): SessionSlashCommands =>
    (slashCommandsCache ??= new SessionSlashCommands({
      config,
      catalog: deps.commandCatalog ?? EMPTY_COMMAND_CATALOG,
      hostRegistry: deps.governance.hostRegistry,
      runHost: () => ({ model: config.model.id, hostEnv, emit, runs, transcript, saveAfterRun: () => saves.saveAfterRun() }),
      toolNames: () => tools.modelSpecs().map((spec) => spec.name),
      mcpServers: () => tools.layers().flatMap((layer) => layer.names()),
      // `/model provider/model`: later runs (and the snapshot) use the new model; it runs under the lease, so no run is in flight.
      ...(deps.resolveModel ? { switchModel: (modelId: string) => (config.model = deps.resolveModel!(modelId, 'model', config.options.temperature)) } : {}),
      // `/compact`: under the lease of its command run, whose id its events and summary call carry.
      compact: (runId: string, signal: AbortSignal) => runCompactCommand(transcript.messages, compaction(), context(runId, signal, runId)),
    }));
  const commandRun = (record: RunRecord, input: string, signal: AbortSignal) => slashCommands().produce(record, input, signal);
  const runControl = new SessionRunControl({
    sessionId,
    sessionKey: host.key,
    hostEnv,
    ownership: deps.ownership,
    runs,
    flight,
    producer,
    commandRun,
    assertOpen: () => lifecycle.assertOpen(sessionId),
    context: (runId, signal) => context(runId, signal, runId),
    touch: () => host.touch(),
    abandoned: () => lifecycle.abandoned,
    ...(quotas ? { quota: { admit: () => quotas.admitRun(tenantId), release: () => quotas.releaseRun(tenantId) } } : {}),
  });
  const snapshotSource = () => ({ config, hostEnv, transcript, createdAtMs: host.createdAtMs, events, artifacts: artifacts.list(), runs: runs.list(), verifications: verifications.list(), subagentTasks: tasks.list(), ownMcpServers: tools.ownConfigs(), permissionGrants: governance.grantKeys(), closed: lifecycle.closedByClient, ...(queue ? { externalTasks: queue.snapshotExternalTasks() } : {}) });
  return {
    // No getter in this literal: V8 keeps an object literal with an accessor in dictionary mode (about 800 bytes a session).
    events, transcript, emit, flight, lifecycle, saves, governance, runs, runControl, artifacts, verifications, tasks, commands, tools, directCalls, llm, memory, queue, slashCommands,
  };
}

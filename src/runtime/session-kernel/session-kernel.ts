import type { SubagentTasks } from '../delegation/subagent-tasks.js';
import { SessionEventLog } from '../events/session-event-log.js';
import { LlmInvoker } from '../invocation/llm-invoker.js';
import type { AgentMemory } from '../memory/agent-memory.js';
import { openAgentMemory } from '../memory/memory-stores.js';
import { sandboxUsageKey } from '../quotas/sandbox-usage-key.js';
import { resolveQueueSettings } from '../queue/queue-settings.js';
import { SessionQueue } from '../queue/session-queue.js';
import { SessionCommands, UNSANDBOXED } from '../sandbox/session-commands.js';
import { SessionChanges } from '../changes/session-changes.js';
import type { SessionKey } from '../../stores/session-key.js';
import { childObserver } from './child-observer.js';
import { HostDirectCalls } from './host-direct-calls.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import type { RestoredState } from './restored-state.js';
import { SessionArtifacts } from './session-artifacts.js';
import { buildSessionDelegation } from './session-delegation-factory.js';
import { createSessionEmit, type SessionEmit } from './session-emitter.js';
import { restoredGovernance, SessionGovernanceAccess } from './session-governance-access.js';
import { SessionLifecycle } from './session-lifecycle.js';
import { SessionMcp } from './session-mcp.js';
import { SessionRunControl } from './session-run-control.js';
import { SessionRuns } from './session-runs.js';
import { SessionSaves } from './session-saves.js';
import type { SessionScope } from './session-services.js';
import { restoredRun } from './session-snapshot-codec.js';
import { offeredBuiltins, SessionTools } from './session-tools.js';
import { SessionTranscript } from './session-transcript.js';
import { SessionImages } from './session-images.js';
import { SessionVerifications } from './session-verifications.js';
import { SingleFlight } from './single-flight.js';
import { VerificationReports } from './verification-reports.js';

/** The parts one live session is made of. */
export interface SessionKernel {
  readonly lifecycle: SessionLifecycle;
  readonly events: SessionEventLog;
  readonly transcript: SessionTranscript;
  readonly emit: SessionEmit;
  readonly artifacts: SessionArtifacts;
  readonly governance: SessionGovernanceAccess;
  readonly mcp: SessionMcp;
  readonly tasks: SubagentTasks;
  /** Where the session's model-chosen commands run. */
  readonly sandbox: SessionCommands;
  /** The session's change capture (a top-level session of a server that captures; docs/changes.md). */
  readonly changes: SessionChanges | undefined;
  readonly tools: SessionTools;
  readonly directCalls: HostDirectCalls;
  readonly llm: LlmInvoker;
  readonly memory: AgentMemory | undefined;
  /** The lane queue (SessionOptions.queueConfig); undefined for an ordinary session, which pays nothing for it. */
  readonly queue: SessionQueue | undefined;
  readonly persistence: SessionSaves;
  readonly verifications: SessionVerifications;
  readonly runs: SessionRunControl;
}

/** What the kernel needs of the session that holds it. */
export interface SessionKernelHost {
  /** The session's key (tenant and id): its store, lease, stream and checkpoint keys. */
  readonly key: SessionKey;
  /** When the session was created (restored, or now). */
  readonly createdAtMs: number;
  /** Told when a run ended (the session notes the activity and re-measures what it holds). */
  runEnded(): void;
}

/**
 * Build the parts of one session from its configuration, where it lives and, on restore, its snapshot's state,
 * strictly in order: each part is given the parts it uses as objects, all built before it, so none can be used
 * before it exists. State first (lifecycle, single flight, transcript, event log), then emit, the run records,
 * artifacts and verification reports, governance, MCP layers, delegation, commands, tools and their invoker, direct
 * calls, the LLM invoker and memory, persistence (which reads every stateful part), then what saves: host
 * verifications and run control. Each part's deps are written out field by field, never spread from a shared
 * object: V8 gives an object spread from one a hidden class of its own, so every session would pay for more maps.
 */
export function buildSessionKernel(
  config: ResolvedSessionConfig,
  scope: SessionScope,
  restored: RestoredState | undefined,
  host: SessionKernelHost,
): SessionKernel {
  const { hostEnv, agent, childOf } = scope;
  const { services } = agent;
  const sessionId = config.sessionId;
  const sessionKey = host.key;
  const workspace = config.workspace;
  const { retention } = config;
  const quotas = services.quotas;
  const tenantId = config.ownerTenantId;

  const lifecycle = new SessionLifecycle(sessionId);
  const flight = new SingleFlight();
  const transcript = new SessionTranscript(
    host.createdAtMs,
    restored?.messages,
    restored?.usage,
    restored?.transcriptEpoch,
    restored?.reverted,
  );
  const events = new SessionEventLog(
    {
      maxEventsPerRun: retention.maxEventsPerRun,
      maxRuns: retention.maxRuns,
      maxSessionEvents: retention.maxEventsPerRun,
      ...(retention.maxEventBytesPerRun !== undefined ? { maxEventBytesPerRun: retention.maxEventBytesPerRun } : {}),
    },
    restored?.sessionSequence ?? 0,
  );
  // A restored session starts as saved at the sequence it was read at: what it emits from here on (a workspace warning) makes it dirty.
  const readAtSequence = events.lastSequence;
  // A child's events are also seen by its parent's delegation (progress, forwarded asks).
  const onEvent = childOf ? childObserver(services.onSessionEvent, childOf.observe) : services.onSessionEvent;
  const emit = createSessionEmit({
    sessionId,
    hostEnv,
    sessionKey,
    labels: config.labels,
    events,
    ownership: services.ownership,
    lifecycle,
    onEvent,
  });

  const queueConfig = config.options.queueConfig;
  const queue = queueConfig
    ? new SessionQueue(sessionId, resolveQueueSettings(queueConfig), hostEnv, {
        lostTasks: restored?.externalTasks ?? [],
        interrupted: () => lifecycle.keepsCheckpoints(),
      })
    : undefined;

  const records = new SessionRuns(
    { sessionId, hostEnv, maxRuns: retention.maxRuns, events, emit },
    (restored?.runs ?? []).map(restoredRun),
    restored?.runQueue,
    restored?.runQueueAttachments,
  );
  const artifacts = new SessionArtifacts(
    hostEnv,
    { maxArtifacts: retention.maxArtifacts, maxBytes: retention.maxArtifactBytes },
    restored?.artifacts,
  );
  const reports = new VerificationReports(
    { sessionId, workspace: config.workspaceDir, hostEnv, emit, flight },
    restored?.verifications,
  );
  const governance = new SessionGovernanceAccess(
    config,
    hostEnv,
    services.governance,
    childOf?.governance,
    restoredGovernance(restored?.permissionGrants, restored?.questions),
    lifecycle,
    queue,
    // A question asked or answered is saved at once on an autoSave session: a takeover finds it.
    () => void persistence.saveIfAutoSave(),
  );

  const sandbox = services.sandbox ?? UNSANDBOXED;
  // The session's $HOME is keyed by tenant and session; the disk its commands use counts in the tenant's stored bytes.
  const commands = new SessionCommands(sandbox, {
    tenantId,
    sessionId,
    ...config.commands,
    workspace: config.workspaceDir,
    ...(quotas
      ? { onStored: (bytes: number) => quotas.recordStored(tenantId, sandboxUsageKey(sessionId), bytes) }
      : {}),
  });
  // A delegated child's changes are its parent run's: only top-level sessions capture.
  const changes =
    services.changes && config.delegationDepth === 0
      ? new SessionChanges(services.changes, sessionKey, {
          tenantId,
          sessionId,
          workspace: config.workspaceDir,
          hostCommands: config.commands.hostCommands,
        })
      : undefined;
  const mcp = new SessionMcp({
    sessionId,
    workspace,
    hostEnv,
    globalMcp: services.mcp,
    globalMcpVersion: agent.mcpVersion,
    logger: services.logger,
    emit,
    flight,
    lifecycle,
    launcher: commands.forOrigin('host_direct'),
    allowPrivate: config.outboundAllowPrivate,
  });
  for (const manager of childOf?.borrowedMcp ?? []) mcp.borrow(manager);
  // Provider requests wait in the generate lane: the session's own, else (a task child) its parent's; none without a queue.
  const providerLane = queue?.generateLane() ?? childOf?.providerLane;
  const { tasks, delegation } = buildSessionDelegation(
    { config, scope, emit, flight, governance, mcp, artifacts, providerLane },
    restored?.subagentTasks,
  );

  // The images `read` returns and the attachments a request names: one object per session, built only with a store.
  const images = services.toolImages
    ? new SessionImages(services.toolImages, services.attachments, sessionKey, config)
    : undefined;
  const tools = new SessionTools({
    permissionPolicy: config.permissionPolicy,
    permissionFloor: config.permissionFloor,
    agentPermissions: config.permissionBounds,
    // ask_user only when a surface can answer (SessionOptions.askUser); a delegated child has no user to ask.
    builtins: offeredBuiltins(services.tools, config.options.askUser === true && config.delegationDepth === 0),
    skills: config.skills,
    mcp,
    invoker: {
      config,
      governance,
      artifacts,
      reports,
      commands,
      fileOwner: sandbox.runAs,
      delegation,
      queue,
      changes,
      ...(images ? { images } : {}),
    },
  });
  const directCalls = new HostDirectCalls({ config, hostEnv, emit, lifecycle, tools });
  const llm = new LlmInvoker(config, governance, providerLane, images);
  // Memory events belong to the active run when there is one (the context provider), else to the session.
  const memory = openAgentMemory(
    config.memory,
    tenantId,
    agent.memoryStores,
    hostEnv,
    (type, payload) => emit(flight.runId, type, payload),
    { sessionId, source: governance },
  );

  if (restored) events.restore(restored.trace);
  // A fork's log starts by saying where it came from (its transcript is seeded by the agent after the build).
  const forkedFrom = config.forkedFrom;
  if (!restored && forkedFrom)
    emit(undefined, 'session_forked', {
      parent_session_id: forkedFrom.sessionId,
      ...(forkedFrom.tenantId !== undefined ? { parent_tenant_id: forkedFrom.tenantId } : {}),
      ...(forkedFrom.atRunId !== undefined ? { at_run_id: forkedFrom.atRunId } : {}),
      at_message: forkedFrom.atMessage,
      workspace: forkedFrom.workspace ?? 'shared',
      ...(forkedFrom.tree !== undefined ? { tree: forkedFrom.tree } : {}),
    });
  if (config.workspaceRepinned)
    emit(undefined, 'workspace_warning', { kind: 'repinned', workspace, message: config.workspaceRepinned });
  for (const file of config.workspaceSkipped ?? [])
    emit(undefined, 'workspace_warning', { kind: 'skipped', workspace, message: file.message, path: file.path });

  const persistence = new SessionSaves(
    {
      config,
      sessionKey,
      createdAtMs: host.createdAtMs,
      scope,
      emit,
      events,
      lifecycle,
      transcript,
      artifacts,
      records,
      reports,
      tasks,
      mcp,
      governance,
      queue,
    },
    restored ? { generation: restored.generation, readAtSequence } : undefined,
  );
  const verifications = new SessionVerifications({
    sessionId,
    hostEnv,
    emit,
    lifecycle,
    reports,
    directCalls,
    artifacts,
    persistence,
  });
  const runs = new SessionRunControl({
    config,
    sessionKey,
    scope,
    emit,
    records,
    transcript,
    reports,
    memory,
    governance,
    tools,
    mcp,
    llm,
    lifecycle,
    persistence,
    flight,
    activity: host,
    quotas,
    queue,
    changes,
    events,
  });
  return {
    lifecycle,
    events,
    transcript,
    emit,
    artifacts,
    governance,
    mcp,
    tasks,
    sandbox: commands,
    changes,
    tools,
    directCalls,
    llm,
    memory,
    queue,
    persistence,
    verifications,
    runs,
  };
}

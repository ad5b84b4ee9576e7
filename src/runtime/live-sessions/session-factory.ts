import type { SessionOptions } from '../../protocol/session-options.js';
import type { SessionSnapshotV1 } from '../../protocol/session-snapshot.js';
import type { CheckpointStore } from '../../stores/checkpoint-store.js';
import { MemoryCheckpointStore } from '../../stores/memory-checkpoint-store.js';
import { MemorySessionStore } from '../../stores/memory-session-store.js';
import type { SessionKey } from '../../stores/session-key.js';
import type { SessionStore } from '../../stores/session-store.js';
import { commandCatalog, type CommandCatalog } from '../commands/command-catalog.js';
import { processMemoryStores, type MemoryStores } from '../memory/memory-stores.js';
import type { Caller } from '../ports/caller.js';
import { createReplayHostEnv, type HostEnv } from '../ports/host-env.js';
import { AgentSession } from '../session-kernel/agent-session.js';
import type { AgentSessionServices, SessionScope, SessionServices } from '../session-kernel/session-services.js';
import type { ResolvedSessionConfig } from '../session-kernel/resolved-session-config.js';
import { buildSessionConfig, resolveModel } from '../session-kernel/session-builder.js';
import type { ChildLink, ChildSpawner } from '../delegation/child-session.js';
import type { ResolvedModel } from '../invocation/llm-invoker.js';

/** Children of one parallel_task running at once when config max_parallel_tasks is unset (the seed's default). */
export const DEFAULT_MAX_PARALLEL_TASKS = 8;
import { WorkspaceContextCache } from '../session-kernel/workspace-context-cache.js';

/**
 * Builds the agent's sessions: resolves options into a ResolvedSessionConfig, wires a session to its stores
 * (the server's durable ones, or this process's for `sessionStore: {type: 'memory'}`), memory stores, MCP
 * and sandbox, and rebuilds stored sessions from their snapshots. It builds; the Agent registers.
 */
export class SessionFactory {
  /** Where `sessionStore: {type: 'memory'}` sessions keep snapshots and checkpoints: this process only. */
  private readonly processStore = new MemorySessionStore();
  private readonly processCheckpoints = new MemoryCheckpointStore();
  /** One set per agent: `memory` memories are shared by the sessions of one tenant and namespace in this process. */
  private readonly memoryStores: MemoryStores;
  private readonly workspaceContext: WorkspaceContextCache;
  /** What the agent adds to its services for every session (one object, shared by them). */
  private readonly agentServices: AgentSessionServices;
  /** The scopes of sessions on the agent's HostEnv, by store kind: shared by every such session. */
  private readonly scopes: { readonly file: SessionScope; readonly memory: SessionScope };

  constructor(
    private readonly deps: SessionServices,
    /** The global MCP layer's version (sessions rebuild their tool lists when it changes). */
    mcpVersion: () => number,
    /** Builds the child sessions of every session's tasks. */
    children?: ChildSpawner,
  ) {
    this.memoryStores = deps.memoryStores ?? processMemoryStores();
    // project_doc_max_bytes = 0 disables the chain; otherwise it is limits.agents_md_bytes (see load-config).
    const agentsMd = {
      maxBytes: deps.config.projectDocMaxBytes === 0 ? 0 : deps.config.limits.agentsMdBytes,
      fallbackNames: deps.config.projectDocFallbackFilenames ?? [],
      ...(deps.config.userInstructionsDir !== undefined ? { personalDir: deps.config.userInstructionsDir } : {}),
    };
    this.workspaceContext = new WorkspaceContextCache(deps.workspaceRoots, agentsMd, () => deps.hostEnv.now());
    const catalog: CommandCatalog = commandCatalog(deps.config);
    this.agentServices = {
      services: deps,
      mcpVersion,
      memoryStores: this.memoryStores,
      commandCatalog: catalog,
      children,
      resolveModel: (modelId, field, temperature) => this.resolveModel(modelId, field, temperature),
      delegation: {
        limits: {
          maxDepth: deps.config.delegation.maxDepth,
          maxParallel: deps.config.maxParallelTasks ?? DEFAULT_MAX_PARALLEL_TASKS,
        },
        inheritance: deps.config.delegation.confirmationInheritance,
        keepFinishedChildren: deps.config.delegation.keepFinishedChildren,
      },
    };
    this.scopes = { file: this.newScope(deps.hostEnv, 'file'), memory: this.newScope(deps.hostEnv, 'memory') };
  }

  /** A new session's resolved configuration and the HostEnv it runs with. */
  async resolve(options: SessionOptions, caller: Caller): Promise<{ config: ResolvedSessionConfig; hostEnv: HostEnv }> {
    const hostEnv = this.hostEnvFor(options.hostEnv, undefined);
    return { config: await buildSessionConfig(options, caller, this.builderDeps(hostEnv)), hostEnv };
  }

  /**
   * The canonical workspace a requested one names for the tenant `tenantId` (as a new session would get it), or
   * undefined when it names none: a resume compares it with the stored session's.
   */
  async canonicalWorkspace(requested: string, tenantId: string, admin: boolean): Promise<string | undefined> {
    try {
      const context = await this.workspaceContext.get(
        { requested, claim: { tenantId, admin }, restored: false },
        this.deps.config,
      );
      return context.workspace;
    } catch {
      return undefined;
    }
  }

  /** A new session of a resolved configuration (not live yet). */
  create(config: ResolvedSessionConfig, hostEnv: HostEnv): AgentSession {
    return new AgentSession(config, this.scopeOf(hostEnv, config.sessionStore));
  }

  /** A new child session of a task (not live yet): it shares its parent's governance through `link`. */
  createChild(config: ResolvedSessionConfig, hostEnv: HostEnv, link: ChildLink): AgentSession {
    return new AgentSession(config, { ...this.newScope(hostEnv, 'memory'), childOf: link });
  }

  /** A `provider/model` id as a model with its provider client. */
  resolveModel(modelId: string, field: string, temperature: number | undefined): ResolvedModel {
    return resolveModel(this.deps.config, modelId, field, temperature, this.deps.providerFor);
  }

  /**
   * A stored session built again (not live yet): its configuration resolved anew, its state restored;
   * `published` is the last session sequence the previous owner published (numbering continues after it).
   */
  async rebuild(
    snapshot: SessionSnapshotV1,
    caller: Caller,
    relabel: Partial<SessionOptions>,
    published: number,
  ): Promise<AgentSession> {
    const stored = snapshot.session;
    const hostEnv = this.hostEnvFor(stored.options.hostEnv, stored.idCounter);
    const config = await buildSessionConfig(
      // Resume options may relabel (principal, agentTemplateId, correlationId); the tenant never changes.
      {
        ...stored.options,
        sessionId: stored.id,
        workspace: stored.workspace,
        model: stored.model,
        tenantId: stored.ownerTenantId,
        ...labelOptions(stored.labels),
        ...relabel,
      },
      { ...caller, tenantId: stored.ownerTenantId },
      this.builderDeps(hostEnv),
      // Stored before the bound was recorded: a session with its own policy is bounded (the safe reading).
      {
        policyBounded: stored.policyBounded ?? stored.options.permissionPolicy !== undefined,
        outboundPrivate: stored.outboundPrivate === true,
        hostCommands: stored.hostCommands === true,
        ...(stored.workspacePin ? { workspacePin: stored.workspacePin } : {}),
      },
    );
    // A fork stays one across restores: where it came from is not an option, so the builder does not know it.
    const forked = stored.forkedFrom ? { ...config, forkedFrom: stored.forkedFrom } : config;
    return new AgentSession(forked, this.scopeOf(hostEnv, config.sessionStore), {
      messages: stored.messages,
      usage: stored.usage,
      createdAtMs: stored.createdAtMs,
      generation: snapshot.generation,
      runs: snapshot.run_records,
      artifacts: snapshot.artifacts,
      trace: snapshot.trace_events,
      verifications: snapshot.verification_reports,
      subagentTasks: snapshot.subagent_tasks,
      ...(snapshot.external_tasks ? { externalTasks: snapshot.external_tasks } : {}),
      ...(snapshot.run_queue ? { runQueue: snapshot.run_queue } : {}),
      ...(snapshot.pending_questions ? { questions: snapshot.pending_questions } : {}),
      ...(snapshot.run_queue_attachments ? { runQueueAttachments: snapshot.run_queue_attachments } : {}),
      ...(stored.permissionGrants ? { permissionGrants: stored.permissionGrants } : {}),
      ...(stored.transcriptEpoch !== undefined ? { transcriptEpoch: stored.transcriptEpoch } : {}),
      ...(stored.reverted ? { reverted: stored.reverted } : {}),
      sessionSequence: Math.max(stored.sessionSequence, published),
    });
  }

  /** The stores a session saves to: the server's durable ones, or this process's for `sessionStore: {type: 'memory'}`. */
  storesFor(kind: 'file' | 'memory'): { store: SessionStore; checkpoints: CheckpointStore } {
    return kind === 'memory'
      ? { store: this.processStore, checkpoints: this.processCheckpoints }
      : { store: this.deps.store, checkpoints: this.deps.checkpoints };
  }

  /** A stored session: from the durable store, else from this process's memory sessions. */
  async loadStored(key: SessionKey): Promise<SessionSnapshotV1 | undefined> {
    return (await this.deps.store.load(key)) ?? (await this.processStore.load(key));
  }

  /** The session's HostEnv: the agent's, or a replay one (sequential ids, fixed clock) from SessionOptions.hostEnv. */
  private hostEnvFor(options: SessionOptions['hostEnv'], startAt: number | undefined): HostEnv {
    return options ? createReplayHostEnv({ ...options, startAt }) : this.deps.hostEnv;
  }

  private builderDeps(hostEnv: HostEnv) {
    return {
      config: this.deps.config,
      hostEnv,
      providerFor: this.deps.providerFor,
      workspaceContext: this.workspaceContext,
    };
  }

  /** Where a session lives: shared by the sessions on the agent's HostEnv, a new one for a replay HostEnv. */
  private scopeOf(hostEnv: HostEnv, kind: 'file' | 'memory'): SessionScope {
    return hostEnv === this.deps.hostEnv ? this.scopes[kind] : this.newScope(hostEnv, kind);
  }

  private newScope(hostEnv: HostEnv, kind: 'file' | 'memory'): SessionScope {
    const { store, checkpoints } = this.storesFor(kind);
    return { agent: this.agentServices, hostEnv, store, checkpoints };
  }
}

/** The identity labels of SessionOptions from a stored session's labels. */
export function labelOptions(labels: {
  principal?: string;
  agentTemplateId?: string;
  correlationId?: string;
}): Partial<SessionOptions> {
  return {
    ...(labels.principal !== undefined ? { principal: labels.principal } : {}),
    ...(labels.agentTemplateId !== undefined ? { agentTemplateId: labels.agentTemplateId } : {}),
    ...(labels.correlationId !== undefined ? { correlationId: labels.correlationId } : {}),
  };
}

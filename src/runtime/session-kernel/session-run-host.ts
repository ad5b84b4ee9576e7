import type { Telemetry } from '../ports/telemetry.js';
import type { SessionChanges } from '../changes/session-changes.js';
import { runCompactCommand } from '../commands/compact-command.js';
import type { CommandRunHost } from '../commands/produce-command-run.js';
import { SessionSlashCommands } from '../commands/session-slash-commands.js';
import { AutoCompactor } from '../compaction/auto-compactor.js';
import type { CompactionDeps } from '../compaction/compact-transcript.js';
import type { LlmInvoker } from '../invocation/llm-invoker.js';
import type { LoopDeps } from '../loop/run-loop.js';
import type { AgentMemory } from '../memory/agent-memory.js';
import type { HostEnv } from '../ports/host-env.js';
import { runCheckpoints, type RunCheckpoints } from '../../stores/checkpoint-store.js';
import type { SessionKey } from '../../stores/session-key.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import type { RunProducerHost } from './run-producer.js';
import type { SessionEmit } from './session-emitter.js';
import type { SessionGovernanceAccess } from './session-governance-access.js';
import type { SessionGovernanceParts } from './session-governance-factory.js';
import { sessionInvocationContext } from './session-invocation-context.js';
import type { SessionLifecycle } from './session-lifecycle.js';
import type { SessionMcp } from './session-mcp.js';
import type { SessionRuns } from './session-runs.js';
import type { SessionSaves } from './session-saves.js';
import type { AgentSessionServices, SessionScope } from './session-services.js';
import type { SessionTools } from './session-tools.js';
import type { SessionTranscript } from './session-transcript.js';
import type { VerificationReports } from './verification-reports.js';

/** The parts of a session its runs use: the loop's services, the transcript, the records, the save after a run. */
export interface SessionRunParts {
  readonly config: ResolvedSessionConfig;
  readonly sessionKey: SessionKey;
  readonly scope: SessionScope;
  readonly emit: SessionEmit;
  readonly records: SessionRuns;
  readonly transcript: SessionTranscript;
  readonly reports: VerificationReports;
  readonly memory: AgentMemory | undefined;
  readonly governance: SessionGovernanceAccess;
  readonly tools: SessionTools;
  readonly mcp: SessionMcp;
  readonly llm: LlmInvoker;
  readonly lifecycle: SessionLifecycle;
  readonly persistence: SessionSaves;
  /** The session's change capture (absent: runs capture nothing). */
  readonly changes: SessionChanges | undefined;
}

/**
 * What a session's runs are produced with (RunProducerHost, and CommandRunHost for slash commands), built by its
 * first run: an idle session keeps none of it. It also builds, on first use, the session's slash commands and the
 * compaction services (most sessions never compact).
 */
export class SessionRunHost implements RunProducerHost, CommandRunHost {
  readonly checkpoints: RunCheckpoints;
  private compactionDeps: CompactionDeps | undefined;
  private autoCompactor: AutoCompactor | undefined;
  private slashCommands: SessionSlashCommands | undefined;

  constructor(private readonly parts: SessionRunParts) {
    this.checkpoints = runCheckpoints(parts.scope.checkpoints, parts.sessionKey);
  }

  get config(): ResolvedSessionConfig {
    return this.parts.config;
  }

  get hostEnv(): HostEnv {
    return this.parts.scope.hostEnv;
  }

  get emit(): SessionEmit {
    return this.parts.emit;
  }

  get runs(): SessionRuns {
    return this.parts.records;
  }

  get transcript(): SessionTranscript {
    return this.parts.transcript;
  }

  get verifications(): VerificationReports {
    return this.parts.reports;
  }

  get memory(): AgentMemory | undefined {
    return this.parts.memory;
  }

  get changes(): SessionChanges | undefined {
    return this.parts.changes;
  }

  get telemetry(): Telemetry | undefined {
    return this.parts.scope.agent.services.telemetry;
  }

  /** The model a command run reports. */
  get model(): string {
    return this.parts.config.model.id;
  }

  governance(): SessionGovernanceParts {
    return this.parts.governance.parts();
  }

  loopDeps(): Omit<LoopDeps, 'checkpoint'> {
    const { llm, tools, config } = this.parts;
    const deps = { llm, tools: tools.invoker, toolSpecs: () => tools.modelSpecs() };
    if (!config.governance.autoCompact) return deps;
    const compactor = (this.autoCompactor ??= new AutoCompactor(this.compaction()));
    return { ...deps, compact: compactor.compact.bind(compactor) };
  }

  keepsCheckpoints(): boolean {
    return this.parts.lifecycle.keepsCheckpoints();
  }

  saveAfterRun(): Promise<void> {
    return this.parts.persistence.saveAfterRun();
  }

  /** What a compaction calls: the one LLM invoker and the session's hooks (the governance is built on first use). */
  compaction(): CompactionDeps {
    const { llm, governance } = this.parts;
    return (this.compactionDeps ??= { llm, hooks: () => governance.parts().governance.hooks });
  }

  /** The session's slash commands (built-ins, config `commands`, POST .../commands), built on first use. */
  commands(): SessionSlashCommands {
    if (this.slashCommands) return this.slashCommands;
    const { config, scope, transcript, tools, mcp } = this.parts;
    const agent: AgentSessionServices = scope.agent;
    this.slashCommands = new SessionSlashCommands({
      config,
      catalog: agent.commandCatalog,
      hostRegistry: agent.services.governance.hostRegistry,
      runHost: () => this,
      toolNames: () => tools.modelSpecs().map((spec) => spec.name),
      mcpServers: () => mcp.layers().flatMap((layer) => layer.names()),
      // `/model provider/model`: later runs (and the snapshot) use the new model; it runs under the lease, so no run is in flight.
      switchModel: (modelId: string) =>
        (config.model = agent.resolveModel(modelId, 'model', config.options.temperature)),
      // `/compact`: under the lease of its command run, whose id its events and summary call carry.
      compact: (runId: string, signal: AbortSignal) =>
        runCompactCommand(transcript.messages, this.compaction(), sessionInvocationContext(this, runId, signal, runId)),
    });
    return this.slashCommands;
  }
}

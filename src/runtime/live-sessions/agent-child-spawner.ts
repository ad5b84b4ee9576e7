import type { ChildLink, ChildParent, ChildSession, ChildSpawner, ChildSpec } from '../delegation/child-session.js';
import { childGovernance } from '../delegation/child-governance.js';
import { childSessionConfig } from '../delegation/child-session-config.js';
import type { ResolvedModel } from '../invocation/llm-invoker.js';
import type { HostEnv } from '../ports/host-env.js';
import type { AgentSession } from '../session-kernel/agent-session.js';
import type { ResolvedSessionConfig } from '../session-kernel/resolved-session-config.js';

/** What the child spawner needs from the agent. */
export interface AgentChildSpawnerHost {
  /** A `provider/model` id as a model (an agent definition's `model`). */
  resolveModel(modelId: string, field: string, temperature: number | undefined): ResolvedModel;
  /** Build a child session (not live yet). */
  create(config: ResolvedSessionConfig, hostEnv: HostEnv, link: ChildLink): AgentSession;
  /** Make a built child live: leased and registered like every session (SHUTTING_DOWN, limits.maxSessions). */
  open(session: AgentSession): Promise<void>;
  /** Close a child and drop it from the server. */
  close(session: AgentSession): Promise<void>;
}

/**
 * Builds the child sessions of `task`, `parallel_task` and `Skill`: a configuration derived from the
 * parent's, the parent's governance (budget, hooks, confirmations per inheritance) with the child's bounds,
 * the parent's MCP layers borrowed, registered with the agent so its events can be followed by id.
 */
export class AgentChildSpawner implements ChildSpawner {
  constructor(private readonly host: AgentChildSpawnerHost) {}

  async spawn(parent: ChildParent, spec: ChildSpec): Promise<ChildSession> {
    const sessionId = parent.hostEnv.newId('sess');
    const agentModel = spec.agent.model;
    const model =
      agentModel !== undefined && agentModel !== parent.config.model.id
        ? this.host.resolveModel(agentModel, `agent "${spec.agent.name}".model`, parent.config.options.temperature)
        : parent.config.model;
    const config = childSessionConfig(parent.config, spec, sessionId, model);
    const link: ChildLink = {
      governance: childGovernance(parent.governanceParts(), config.permissionBounds, spec.inheritance, spec.skill),
      // The global layer is every session's already; the parent's inherited and own servers are borrowed.
      borrowedMcp: parent.mcpLayers().slice(1),
      observe: spec.observe,
      ...(parent.providerLane ? { providerLane: parent.providerLane } : {}),
    };
    const session = this.host.create(config, parent.hostEnv, link);
    await this.host.open(session);
    return {
      id: session.id,
      run: (input, signal) => {
        const handle = session.runs.start({ input, parentSignal: signal });
        return { runId: handle.record.runId, done: handle.done };
      },
      close: () => this.host.close(session),
    };
  }
}

import type { z } from 'zod';
import type {
  RegisterWorkerAgentsResponseSchema,
  WorkerAgentDefinition,
  WorkerAgentSpecInput,
} from '../protocol/worker-agents.js';
import { sessionPath, type SessionContext } from './session-context.js';

/** Answer of POST .../agents/workers: the compiled workers and every agent of the session. */
export type WorkerAgentsRegistered = z.infer<typeof RegisterWorkerAgentsResponseSchema>;

/** A session's worker agents (the seed's registerWorkerAgent and registerWorkerAgents). */
export class SessionWorkers {
  constructor(private readonly ctx: SessionContext) {}

  /** Register one worker; answers the AgentDefinition it compiled to (the seed's return value). */
  async registerWorkerAgent(spec: WorkerAgentSpecInput): Promise<WorkerAgentDefinition> {
    const [definition] = await this.registerWorkerAgents([spec]);
    return definition;
  }

  /** Register several workers at once (none when one is bad); answers their AgentDefinitions in order. */
  async registerWorkerAgents(specs: readonly WorkerAgentSpecInput[]): Promise<WorkerAgentDefinition[]> {
    const path = sessionPath(this.ctx, '/agents/workers');
    return (await this.ctx.transport.post<WorkerAgentsRegistered>(path, { workers: specs })).registered;
  }
}

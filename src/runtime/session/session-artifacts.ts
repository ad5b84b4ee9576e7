import type { Artifact } from '../../protocol/session-snapshot.js';
import type { HostEnv } from '../host-env.js';

/** A session's artifacts: the full output of tool calls whose result the output cap cut, by id. */
export class SessionArtifacts {
  private readonly byId = new Map<string, Artifact>();

  constructor(
    private readonly hostEnv: HostEnv,
    restored: readonly Artifact[] = [],
  ) {
    for (const artifact of restored) this.byId.set(artifact.id, artifact);
  }

  /** A stored artifact. */
  get(id: string): Artifact | undefined {
    return this.byId.get(id);
  }

  /** Store a tool call's full output; returns the new artifact's id. */
  store(content: string, toolCallId: string, toolName: string): string {
    const id = this.hostEnv.newId('art');
    this.byId.set(id, { id, toolCallId, toolName, createdAtMs: this.hostEnv.now(), content });
    return id;
  }

  /** Every artifact, oldest first. */
  list(): Artifact[] {
    return [...this.byId.values()];
  }
}

import type { Artifact } from '../../protocol/session-snapshot.js';
import type { HostEnv } from '../ports/host-env.js';

/** How many artifacts a session keeps, and how many bytes of content in all (limits.maxArtifacts*PerSession). */
export interface ArtifactLimits {
  readonly maxArtifacts: number;
  readonly maxBytes: number;
}

/** The bound an eviction (or a refused artifact) names. */
export const ARTIFACT_COUNT_LIMIT = 'limits.maxArtifactsPerSession';
/** The bound an eviction (or a refused artifact) names. */
export const ARTIFACT_BYTES_LIMIT = 'limits.maxArtifactBytesPerSession';

/** How many evicted ids a session remembers, so a late GET can say "evicted" rather than "not found". */
const EVICTED_IDS_KEPT = 1024;

/**
 * A session's artifacts: the full output of tool calls whose result the output cap cut, by id. Bounded
 * in count and total bytes: a new artifact evicts the oldest ones first, so the newest stay retrievable.
 */
export class SessionArtifacts {
  // Both maps are created on first use: most sessions never store an artifact.
  private byId: Map<string, { artifact: Artifact; bytes: number }> | undefined;
  private totalBytes = 0;
  /** Evicted id -> the bound that evicted it (oldest first, at most EVICTED_IDS_KEPT). */
  private evicted: Map<string, string> | undefined;

  constructor(
    private readonly hostEnv: HostEnv,
    private readonly limits: ArtifactLimits,
    restored: readonly Artifact[] = [],
  ) {
    // A snapshot saved before the bounds (or under larger ones) is trimmed the same way, oldest first.
    for (const artifact of restored) this.add(artifact);
  }

  /** A stored artifact. */
  get(id: string): Artifact | undefined {
    return this.byId?.get(id)?.artifact;
  }

  /** The bound that evicted this artifact, when it was evicted recently; undefined otherwise. */
  evictedBy(id: string): string | undefined {
    return this.evicted?.get(id);
  }

  /**
   * Store a tool call's full output, evicting the oldest artifacts as the bounds require; returns the new
   * artifact's id, or undefined when the content alone is larger than limits.maxArtifactBytesPerSession.
   */
  store(content: string, toolCallId: string, toolName: string): string | undefined {
    const id = this.hostEnv.newId('art');
    return this.add({ id, toolCallId, toolName, createdAtMs: this.hostEnv.now(), content }) ? id : undefined;
  }

  /** UTF-8 bytes of the kept artifacts' content. */
  get bytes(): number {
    return this.totalBytes;
  }

  /** Every artifact, oldest first. */
  list(): Artifact[] {
    return this.byId ? [...this.byId.values()].map((entry) => entry.artifact) : [];
  }

  private add(artifact: Artifact): boolean {
    const bytes = Buffer.byteLength(artifact.content);
    if (bytes > this.limits.maxBytes) return false;
    const byId = (this.byId ??= new Map());
    const previous = byId.get(artifact.id);
    if (previous) {
      byId.delete(artifact.id);
      this.totalBytes -= previous.bytes;
    }
    for (const [id, entry] of byId) {
      const overCount = byId.size + 1 > this.limits.maxArtifacts;
      if (!overCount && this.totalBytes + bytes <= this.limits.maxBytes) break;
      byId.delete(id);
      this.totalBytes -= entry.bytes;
      this.remember(id, overCount ? ARTIFACT_COUNT_LIMIT : ARTIFACT_BYTES_LIMIT);
    }
    byId.set(artifact.id, { artifact, bytes });
    this.totalBytes += bytes;
    return true;
  }

  private remember(id: string, limit: string): void {
    const evicted = (this.evicted ??= new Map());
    evicted.set(id, limit);
    if (evicted.size > EVICTED_IDS_KEPT) evicted.delete(evicted.keys().next().value as string);
  }
}

import { CodeError } from '../../errors.js';
import { loadAgentsMd } from '../prompt/agents-md.js';
import { resolveWorkspace } from './session-builder.js';

/** A resolved workspace and the AGENTS.md text that applies to it. */
export interface WorkspaceContext {
  workspace: string;
  agentsMd: string;
}

interface Entry {
  expiresAt: number;
  value: Promise<WorkspaceContext>;
}

/** How long a resolved workspace and its AGENTS.md are reused by new sessions. */
export const WORKSPACE_CONTEXT_TTL_MS = 2000;
const MAX_ENTRIES = 1024;

/**
 * Resolves a requested workspace (realpath, confinement) and loads its AGENTS.md chain, reusing the
 * answer for WORKSPACE_CONTEXT_TTL_MS so bursts of session creation on one workspace touch the file
 * system once; concurrent lookups share one promise. Failures are not cached. AGENTS.md edits reach new
 * sessions within the TTL.
 */
export class WorkspaceContextCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly roots: readonly string[],
    private readonly agentsMdBytes: number,
    private readonly now: () => number,
  ) {}

  /** The context for a requested workspace (undefined: the first root). */
  get(requested: string | undefined): Promise<WorkspaceContext> {
    const key = requested ?? '';
    const at = this.now();
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > at) return hit.value;
    const value = this.load(requested);
    this.entries.delete(key);
    this.entries.set(key, { expiresAt: at + WORKSPACE_CONTEXT_TTL_MS, value });
    if (this.entries.size > MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.entries.delete(key);
    });
    return value;
  }

  private async load(requested: string | undefined): Promise<WorkspaceContext> {
    const workspace = await resolveWorkspace(requested, this.roots);
    try {
      return { workspace, agentsMd: await loadAgentsMd(workspace, this.agentsMdBytes) };
    } catch (error) {
      throw new CodeError('SESSION_INITIALIZATION_ERROR', `AGENTS.md: could not be read (${error instanceof Error ? error.message : String(error)})`, { resource: 'AGENTS.md' });
    }
  }
}

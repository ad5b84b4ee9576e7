import { CodeError } from '../../errors.js';
import { loadAgentsMd, type SkippedFile } from '../prompt/agents-md.js';
import {
  confinementRoot,
  defaultWorkspace,
  resolveTenantDirectory,
  restoredWorkspace,
  workspaceLayout,
  type DirectoryClaim,
  type WorkspaceLayout,
} from './tenant-workspace.js';
import type { CodeConfig } from '../../config/code-config.js';

/** A resolved workspace, the AGENTS.md text that applies to it and the instruction files skipped (they lead outside its confinement). */
export interface WorkspaceContext {
  workspace: string;
  agentsMd: string;
  skipped: readonly SkippedFile[];
}

/** One workspace lookup: what was asked, for whom, and whether a stored session is being restored. */
export interface WorkspaceRequest {
  /** The requested workspace (undefined: the tenant's default). */
  readonly requested: string | undefined;
  /** The session's owner tenant and whether the caller is an admin. */
  readonly claim: DirectoryClaim;
  /** A stored session is being restored: `requested` is its stored canonical workspace (never cached). */
  readonly restored?: boolean;
  /** The session's own instruction file fallbacks (SessionOptions.projectDocFallbackFilenames): replace the operator's. */
  readonly fallbackNames?: readonly string[];
}

/** How the AGENTS.md chain is read: the combined budget (0: not read) and the operator's fallback file names. */
export interface AgentsMdSettings {
  readonly maxBytes: number;
  readonly fallbackNames: readonly string[];
  /** The operator's user_instructions_dir, read before the workspace's chain. */
  readonly personalDir?: string;
}

/** The configuration keys that decide where workspaces may be. */
export type WorkspaceConfig = Pick<CodeConfig, 'apiTokens' | 'sharedWorkspaceRoots' | 'workspaceRoots'>;

interface Entry {
  expiresAt: number;
  value: Promise<WorkspaceContext>;
}

/** How long a resolved workspace and its AGENTS.md are reused by new sessions. */
export const WORKSPACE_CONTEXT_TTL_MS = 2000;
const MAX_ENTRIES = 1024;

/**
 * Resolves a requested workspace (realpath, confinement to the roots and, with tenants split, to the tenant's
 * own space) and loads its AGENTS.md chain, reusing the answer for WORKSPACE_CONTEXT_TTL_MS so bursts of
 * session creation on one workspace touch the file system once; concurrent lookups share one promise.
 * Answers are keyed by tenant, admin-ness and fallback names, so one tenant never reuses another's. Failures are not cached.
 * AGENTS.md edits reach new sessions within the TTL. The chain is read confined to the workspace's
 * confinement root (see confinementRoot and loadAgentsMd).
 */
export class WorkspaceContextCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly roots: readonly string[],
    private readonly agentsMd: AgentsMdSettings,
    private readonly now: () => number,
  ) {}

  /** The context for a workspace request under a configuration's layout. */
  get(request: WorkspaceRequest, config: WorkspaceConfig): Promise<WorkspaceContext> {
    if (request.restored) return this.load(request, config);
    const key = JSON.stringify([
      request.requested ?? null,
      request.claim.tenantId,
      request.claim.admin,
      request.claim.showsRoots === true,
      request.fallbackNames ?? null,
    ]);
    const at = this.now();
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > at) return hit.value;
    const value = this.load(request, config);
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

  private async load(request: WorkspaceRequest, config: WorkspaceConfig): Promise<WorkspaceContext> {
    const layout = await workspaceLayout(config, this.roots);
    const workspace = await resolveRequested(layout, request);
    try {
      const loaded = await loadAgentsMd({
        workspace,
        confinement: confinementRoot(layout, workspace),
        maxBytes: this.agentsMd.maxBytes,
        fallbackNames: request.fallbackNames ?? this.agentsMd.fallbackNames,
        ...(this.agentsMd.personalDir !== undefined ? { personalDir: this.agentsMd.personalDir } : {}),
      });
      return { workspace, agentsMd: loaded.text, skipped: loaded.skipped };
    } catch (error) {
      throw new CodeError(
        'SESSION_INITIALIZATION_ERROR',
        `AGENTS.md: could not be read (${error instanceof Error ? error.message : String(error)})`,
        { resource: 'AGENTS.md' },
      );
    }
  }
}

function resolveRequested(layout: WorkspaceLayout, request: WorkspaceRequest): Promise<string> {
  if (request.requested === undefined) return defaultWorkspace(layout, request.claim.tenantId);
  if (request.restored) return restoredWorkspace(layout, request.requested);
  return resolveTenantDirectory(layout, request.requested, request.claim, { field: 'workspace' });
}

import path from 'node:path';
import type { CodeConfig } from '../../config/code-config.js';
import { CodeError } from '../../errors.js';
import { CaptureError } from '../changes/capture-error.js';
import type { ChangeCapture } from '../changes/change-capture.js';
import { forkTree, forkTreeUnavailable } from '../changes/fork-tree.js';
import type { AgentSession } from '../session-kernel/agent-session.js';
import { defaultWorkspace, workspaceLayout, type WorkspaceLayout } from '../session-kernel/tenant-workspace.js';
import { copyName, makeCopyDirectory, type CopyDirectory } from '../workspace/copy-directory.js';

/** What a copy fork needs from the server. */
export interface ForkCopyDeps {
  readonly changes?: ChangeCapture | undefined;
  readonly config: CodeConfig;
  readonly workspaceRoots: readonly string[];
}

/** A fork's copied workspace: the directory (held open until `close`) and the tree it was written from. */
export interface ForkCopy {
  readonly dir: CopyDirectory;
  /** `git-tree:<id>`. */
  readonly tree: string;
  /** Empty and remove the copy (the fork did not become a session), then close it. */
  discard(): Promise<void>;
}

/**
 * The forking tenant's root, where copies go: `<first non-shared root>/<tenantId>` when tenants are split (made on
 * first use), else the first root. It must resolve to exactly that path (WORKSPACE_CHANGED when a name on the way
 * leads elsewhere now, e.g. the tenant's directory swapped for a symlink).
 */
async function tenantRoot(layout: WorkspaceLayout, tenantId: string): Promise<string> {
  const own = layout.roots.filter((root) => !layout.shared.has(root));
  const expected = layout.perTenant && own[0] !== undefined ? path.join(own[0], tenantId) : layout.roots[0]!;
  const resolved = await defaultWorkspace(layout, tenantId).catch(() => undefined);
  if (resolved !== expected)
    throw new CodeError(
      'WORKSPACE_CHANGED',
      `workspace: the tenant's directory ${expected} does not resolve to itself (${resolved ?? 'it cannot be resolved'})`,
      { field: 'workspace' },
    );
  return expected;
}

/**
 * Write a copy fork's workspace (docs/fork.md): the tree of the fork point (forkTree) checked out from the parent's
 * shadow store into a new directory `<parent workspace name>-fork-<fork id>` in the forking tenant's root, made and
 * written through descriptors (makeCopyDirectory; git in the sandbox, the store read-only).
 */
export async function makeForkCopy(
  parent: AgentSession,
  atRunId: string | undefined,
  fork: { readonly id: string; readonly tenantId: string },
  deps: ForkCopyDeps,
): Promise<ForkCopy> {
  const capture = deps.changes;
  const tree = await forkTree(parent, capture, atRunId);
  const source = parent.changes!.target;
  const shadows = capture!.deps.shadows;
  if (!shadows.canCapture(source))
    throw forkTreeUnavailable('capture_off', 'this session may not run commands here, so its files cannot be copied');
  const layout = await workspaceLayout(deps.config, deps.workspaceRoots);
  const root = await tenantRoot(layout, fork.tenantId);
  const dir = makeCopyDirectory(root, `${copyName(path.basename(parent.workspace))}-fork-${fork.id}`, layout.owner);
  try {
    await shadows.checkout(source, tree, dir.access);
  } catch (error) {
    // bwrap mounts a descriptor's directory by its path at that moment and checks it is the descriptor's: a
    // directory moved meanwhile (or moved and back) fails the mount ("Can't get type of source", a mismatch).
    const moved =
      dir.moved() ||
      (error instanceof CaptureError &&
        /bwrap: (Can't get type of source|Can't find source|.*doesn't match)/.test(error.message));
    dir.remove();
    dir.close();
    if (moved)
      throw new CodeError(
        'WORKSPACE_CHANGED',
        `workspace: the tenant's directory ${root} was moved or swapped while the copy was written`,
        { field: 'workspace' },
      );
    if (error instanceof CaptureError && error.reason === 'tree_missing')
      throw forkTreeUnavailable(
        'tree_missing',
        "this node's shadow store does not hold the fork point's tree (it was captured on another node, or the store was removed)",
      );
    if (error instanceof CaptureError)
      throw new CodeError(
        'SESSION_INITIALIZATION_ERROR',
        `workspace: the copy could not be written: ${error.message}`,
        {
          resource: 'workspace',
        },
      );
    throw error;
  }
  return {
    dir,
    tree: `git-tree:${tree}`,
    discard: async () => {
      try {
        await shadows.clear(source, dir.access);
        dir.remove();
      } catch {
        // Left for the operator: the copy is the tenant's files, never the server's.
      } finally {
        dir.close();
      }
    },
  };
}

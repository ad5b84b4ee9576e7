import { chmod, lchown, lstat, mkdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { SAFE_TENANT_ID, SAFE_TENANT_ID_RULE } from '../../config/api-token.js';
import type { CodeConfig } from '../../config/code-config.js';
import { CodeError } from '../../errors.js';
import { isInside } from '../tools/workspace-path.js';
import { runAsOf } from '../sandbox/run-as.js';
import type { FileOwner } from '../workspace/workspace-files.js';

/** How one server confines the directories callers name: its canonical roots, which are shared, whether tenants are split. */
export interface WorkspaceLayout {
  /** Canonical workspace roots (configured order), then the shared roots not already among them. */
  readonly roots: readonly string[];
  /** The canonical roots every tenant may use (`shared_workspace_roots`). */
  readonly shared: ReadonlySet<string>;
  /** Tokens of more than one tenant are configured: every non-shared root holds one directory per tenant. */
  readonly perTenant: boolean;
  /** A root server's sandbox.run_as: tenant directories belong to it (its commands run in them). */
  readonly owner?: FileOwner;
}

/** Who a directory is resolved for: the session's owner tenant, and whether the caller may name any directory inside the roots. */
export interface DirectoryClaim {
  readonly tenantId: string;
  readonly admin: boolean;
  /**
   * Whether a refusal may name the configured roots (callers with `admin` or `host_direct`, who run on the host
   * anyway): they learn where workspaces may be and that A3S_WORKSPACE_ROOTS sets it. Others never get a map
   * of the host's layout.
   */
  readonly showsRoots?: boolean;
}

/** How resolveTenantDirectory reads a request. */
export interface ResolveDirectoryOptions {
  /** The request field named in errors (`workspace`, `transport.cwd`, `skillDirs[0]`, ...). */
  readonly field: string;
  /** What a relative request resolves against (default: the tenant's own directory, or the first root). */
  readonly base?: string;
}

type LayoutConfig = Pick<CodeConfig, 'apiTokens' | 'sharedWorkspaceRoots' | 'workspaceRoots'>;

const layouts = new WeakMap<LayoutConfig, Promise<WorkspaceLayout>>();

/** Mode of a tenant's own directory: only the server's user may enter it. */
export const TENANT_DIR_MODE = 0o700;

/** True when the configured tokens belong to more than one tenant: then every tenant has its own space under each root. */
export function isPerTenant(config: Pick<CodeConfig, 'apiTokens'>): boolean {
  return new Set(config.apiTokens.map((token) => token.tenantId)).size > 1;
}

async function canonicalRoot(root: string, key: string): Promise<string> {
  try {
    return await realpath(root);
  } catch {
    throw new CodeError('SESSION_INITIALIZATION_ERROR', `${key}: root ${root} does not exist`, { resource: key });
  }
}

/**
 * The layout of a configuration (computed once per config object): `roots` are the canonical workspace roots
 * (default: those of `config.workspaceRoots`, else the current directory), shared roots are added to them.
 */
export function workspaceLayout(config: LayoutConfig, roots?: readonly string[]): Promise<WorkspaceLayout> {
  let layout = layouts.get(config);
  if (!layout) {
    layout = buildLayout(config, roots);
    layouts.set(config, layout);
    layout.catch(() => layouts.delete(config));
  }
  return layout;
}

async function buildLayout(config: LayoutConfig, given: readonly string[] | undefined): Promise<WorkspaceLayout> {
  const roots = given
    ? [...given]
    : await Promise.all(
        (config.workspaceRoots ?? [process.cwd()]).map((root) => canonicalRoot(root, 'workspaceRoots')),
      );
  const shared = new Set(
    await Promise.all(
      config.sharedWorkspaceRoots.map((root) => canonicalRoot(path.resolve(root), 'sharedWorkspaceRoots')),
    ),
  );
  for (const root of shared) if (!roots.includes(root)) roots.push(root);
  const owner = runAsOf(config);
  return { roots, shared, perTenant: isPerTenant(config), ...(owner ? { owner } : {}) };
}

/** The one answer a confined caller gets for a missing directory, another tenant's, the root itself or anything outside. */
function notFound(field: string, requested: string): CodeError {
  return new CodeError(
    'WORKSPACE_NOT_FOUND',
    `${field}: "${requested}" is not a directory in this tenant's workspace space`,
    { field },
  );
}

function configError(field: string, message: string): CodeError {
  return new CodeError('SESSION_CONFIGURATION_ERROR', `${field}: ${message}`, { field });
}

/** The tenant's own directory under each non-shared root (lexical: a symlink planted there resolves elsewhere and is refused). */
function tenantHomes(layout: WorkspaceLayout, tenantId: string): string[] {
  if (!SAFE_TENANT_ID.test(tenantId))
    throw configError('tenantId', `"${tenantId}" cannot name a workspace directory (${SAFE_TENANT_ID_RULE})`);
  return layout.roots.filter((root) => !layout.shared.has(root)).map((root) => path.join(root, tenantId));
}

/**
 * Create a tenant's directory on first use, mode 0700 (whatever the umask), owned by run_as when the server is root
 * with one (its commands run as that user and must enter it); one the server made earlier (root's) is given to it.
 */
async function ensureHome(home: string, owner: FileOwner | undefined): Promise<void> {
  const existing = await lstat(home).catch(() => null);
  if (existing) {
    // Never through a symlink (lchown), and only the server's own directory, not one an operator gave to someone else.
    if (owner && existing.isDirectory() && existing.uid === 0)
      await lchown(home, owner.uid, owner.gid).catch(() => undefined);
    return;
  }
  try {
    await mkdir(home, { mode: TENANT_DIR_MODE });
    if (owner) await lchown(home, owner.uid, owner.gid);
    await chmod(home, TENANT_DIR_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw new CodeError(
      'SESSION_INITIALIZATION_ERROR',
      `workspace: the tenant's directory could not be created (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      { resource: 'workspace' },
    );
  }
}

/** The deepest root holding a canonical path (the most specific root decides whether it is shared). */
function rootOf(layout: WorkspaceLayout, canonical: string): string | undefined {
  let best: string | undefined;
  for (const root of layout.roots)
    if (isInside(root, canonical) && (best === undefined || root.length > best.length)) best = root;
  return best;
}

/** True when a tenant may use the canonical directory: inside a shared root, or inside its own directory of the root holding it. */
export function inTenantSpace(layout: WorkspaceLayout, canonical: string, tenantId: string): boolean {
  const root = rootOf(layout, canonical);
  if (root === undefined) return false;
  return layout.shared.has(root) || isInside(path.join(root, tenantId), canonical);
}

/**
 * The tenant's default workspace: `<first non-shared root>/<tenantId>` (created 0700) when tenants are split,
 * else the first root.
 */
export async function defaultWorkspace(layout: WorkspaceLayout, tenantId: string): Promise<string> {
  const home = layout.perTenant ? tenantHomes(layout, tenantId)[0] : undefined;
  if (home === undefined) return layout.roots[0];
  await ensureHome(home, layout.owner);
  try {
    return await realpath(home);
  } catch {
    throw notFound('workspace', home);
  }
}

/**
 * Resolve a directory a caller names (a workspace, an MCP server's `cwd`, later `skillDirs`/`agentDirs`) to its
 * canonical path. With tenants split, a caller without admin gets only its own space: `<root>/<tenantId>` under
 * each non-shared root and the shared roots; anything else (missing, another tenant's, the root itself, outside
 * every root, reached by `..` or a symlink) is one WORKSPACE_NOT_FOUND answer, so no existence is revealed.
 * Admins, and every caller of a single-tenant server, may name any directory inside the roots.
 */
export async function resolveTenantDirectory(
  layout: WorkspaceLayout,
  requested: string,
  claim: DirectoryClaim,
  options: ResolveDirectoryOptions,
): Promise<string> {
  const { field } = options;
  // An admin may create a session for any tenant id; one that cannot name a directory just has no home to resolve against.
  const homes =
    layout.perTenant && (!claim.admin || SAFE_TENANT_ID.test(claim.tenantId))
      ? tenantHomes(layout, claim.tenantId)
      : [];
  const lexical = path.resolve(options.base ?? homes[0] ?? layout.roots[0], requested);
  if (layout.perTenant && !claim.admin) {
    for (const home of homes) if (isInside(home, lexical)) await ensureHome(home, layout.owner);
    let canonical: string;
    try {
      canonical = await realpath(lexical);
    } catch {
      throw notFound(field, requested);
    }
    if (!inTenantSpace(layout, canonical, claim.tenantId)) throw notFound(field, requested);
    // Gone since realpath (a name on the way swapped meanwhile): the same answer as missing.
    const found = await stat(canonical).catch(() => undefined);
    if (found === undefined) throw notFound(field, requested);
    if (!found.isDirectory()) throw configError(field, `"${requested}" is not a directory`);
    return canonical;
  }
  let canonical: string;
  try {
    canonical = await realpath(lexical);
  } catch {
    throw configError(field, `"${requested}" does not exist`);
  }
  if (rootOf(layout, canonical) === undefined) {
    throw new CodeError(
      'WORKSPACE_OUTSIDE_ROOTS',
      claim.showsRoots === true
        ? `${field}: "${requested}" resolves to ${canonical}, outside the configured workspace roots (${layout.roots.join(', ')}); the operator sets them with workspace_roots or A3S_WORKSPACE_ROOTS`
        : `${field}: "${requested}" is outside the configured workspace roots`,
      claim.showsRoots === true ? { field, roots: [...layout.roots] } : { field },
    );
  }
  const found = await stat(canonical).catch(() => undefined);
  if (found === undefined) throw configError(field, `"${requested}" does not exist`);
  if (!found.isDirectory()) throw configError(field, `"${requested}" is not a directory`);
  return canonical;
}

/**
 * Re-check the workspace of a restored session (resume, hydration on another node). It keeps the directory it
 * was created with, checked then for its creator: with tenants split, the stored canonical path must still be
 * itself (a directory on the way swapped for a symlink would otherwise carry the session into another space)
 * and inside the roots.
 */
export async function restoredWorkspace(layout: WorkspaceLayout, stored: string): Promise<string> {
  if (!layout.perTenant) {
    const canonical = await resolveTenantDirectory(
      layout,
      stored,
      { tenantId: '', admin: true },
      { field: 'workspace', base: layout.roots[0] },
    );
    if (canonical !== path.resolve(stored)) throw workspaceChanged(stored);
    return canonical;
  }
  let canonical: string;
  try {
    canonical = await realpath(stored);
  } catch {
    throw notFound('workspace', stored);
  }
  if (
    canonical !== path.resolve(stored) ||
    rootOf(layout, canonical) === undefined ||
    !(await stat(canonical)).isDirectory()
  )
    throw workspaceChanged(stored);
  return canonical;
}

/** A restored session whose stored workspace path now leads elsewhere (a directory on the way swapped for a symlink). */
function workspaceChanged(stored: string): CodeError {
  return new CodeError(
    'WORKSPACE_CHANGED',
    `workspace: the stored session's workspace "${stored}" no longer resolves to the directory it was created with`,
    { field: 'workspace' },
  );
}

/**
 * The directory nothing the server reads for a session (its AGENTS.md chain) may come from outside of: with
 * tenants split, the tenant's own directory holding the workspace (`<root>/<tenantId>`), or the shared root;
 * else the workspace root holding it. Never above the root, and the workspace itself when no root holds it.
 */
export function confinementRoot(layout: WorkspaceLayout, canonical: string): string {
  const root = rootOf(layout, canonical);
  if (root === undefined) return canonical;
  if (!layout.perTenant || layout.shared.has(root)) return root;
  const below = path.relative(root, canonical);
  return below === '' ? canonical : path.join(root, below.split(path.sep)[0]);
}

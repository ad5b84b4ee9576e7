import { createHash } from 'node:crypto';
import { chmod, chown, lstat, mkdir, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { FileOwner } from '../workspace/workspace-files.js';

/** Mode of a session's $HOME: only its owner (run_as, or the server's user) enters it. */
export const HOME_MODE = 0o700;
/** Mode of the directory holding the homes when commands run as run_as: it may pass through, not list. */
const PASS_THROUGH_MODE = 0o711;

/**
 * The directory name of a session's home: a hash of the tenant AND the session id, encoded injectively (a JSON array
 * of the two), so two tenants that both name a session `ci` never share one, whatever characters the ids hold.
 */
export function homeName(tenantId: string, sessionId: string): string {
  return createHash('sha256')
    .update(JSON.stringify([tenantId, sessionId]))
    .digest('hex');
}

function errnoCode(error: unknown): string | undefined {
  return error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
}

/** Give every directory of a tree (never through a symlink) its owner's rwx, so a tree a command chmod-ed 000 can be removed. */
async function openUp(dir: string): Promise<void> {
  await chmod(dir, 0o700).catch(() => undefined);
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) if (entry.isDirectory()) await openUp(path.join(dir, entry.name));
}

/**
 * The per-session homes of contained commands: `<state dir>/homes/<sha256 of tenant and session>`, created 0700 and
 * owned by run_as when the server runs as root, kept across the session's commands (caches survive), removed when the
 * session is closed or purged. The homes directory itself is 0711 then (run_as passes through it to its home, bwrap
 * resolves the path as that user; it lists nothing).
 */
export class SandboxHomes {
  private ready: Promise<void> | undefined;

  constructor(
    private readonly dir: string,
    private readonly owner?: FileOwner,
  ) {}

  /** The host path of a session's home. */
  pathOf(tenantId: string, sessionId: string): string {
    return path.join(this.dir, homeName(tenantId, sessionId));
  }

  /** Create the session's home (0700, run_as's) if it is missing; its path. */
  async ensure(tenantId: string, sessionId: string): Promise<string> {
    this.ready ??= this.prepareDir();
    await this.ready;
    const home = this.pathOf(tenantId, sessionId);
    try {
      await mkdir(home, { mode: HOME_MODE });
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') throw error;
      return home;
    }
    if (this.owner) await chown(home, this.owner.uid, this.owner.gid);
    await chmod(home, HOME_MODE);
    return home;
  }

  /**
   * Remove a session's home and everything in it (never following a symlink planted there). It is first renamed
   * aside, so a command started meanwhile gets a fresh home instead of a half-removed one.
   */
  async remove(tenantId: string, sessionId: string): Promise<void> {
    const home = this.pathOf(tenantId, sessionId);
    const aside = `${home}.removing-${process.pid}-${Date.now()}`;
    try {
      await rename(home, aside);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return;
      throw error;
    }
    try {
      await rm(aside, { recursive: true, force: true });
    } catch {
      // A directory a command made unreadable (chmod 000) stops a non-root server: open the tree up, then again.
      await openUp(aside);
      await rm(aside, { recursive: true, force: true });
    }
  }

  private async prepareDir(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const stats = await lstat(this.dir);
    if (!stats.isDirectory()) throw new Error(`${this.dir} is not a directory`);
    await chmod(this.dir, this.owner ? PASS_THROUGH_MODE : 0o700);
  }
}

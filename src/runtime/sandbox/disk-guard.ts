import { constants } from 'node:fs';
import { open, statfs } from 'node:fs/promises';
import type { WorkspaceAccess } from '../workspace/workspace-directory.js';
import { DiskQuotaExceededError } from './sandbox.js';
import { treeSize, type TreeSize } from './tree-size.js';

/** The disk bounds of sandboxed commands (config limits.sandbox_home_bytes, limits.min_free_disk_bytes). */
export interface DiskBounds {
  /** Disk one session's commands may use: its home plus what they added to the workspace. */
  readonly maxBytes: number;
  /** Commands are refused while the data directory's or the workspace's file system has less free space. */
  readonly minFreeBytes: number;
  /** The data directory (its file system holds every tenant's sessions and homes). */
  readonly dataDir: string;
}

/** What a session's guard measures: its workspace (leases of the pinned directory) and its home. */
export interface GuardedPlaces {
  readonly workspace: WorkspaceAccess;
  /** The host path of the session's home (its commands create it; never created by a measurement, which may run after the session closed). */
  readonly home: string;
  /** Told the session's usage after each measurement (the tenant's stored bytes). */
  onMeasured?(bytes: number): void;
}

const MIB = 1024 * 1024;
const EMPTY: TreeSize = { bytes: 0, entries: 0, complete: true };

function mib(bytes: number): string {
  return `${(bytes / MIB).toFixed(1)} MiB`;
}

async function freeBytes(where: string): Promise<number> {
  const stats = await statfs(where);
  return stats.bavail * stats.bsize;
}

/**
 * One session's disk bound. Before a command: free space of the data directory's and the workspace's file systems
 * (statfs) at least `minFreeBytes`, and the session's usage (home + workspace growth since its first command, as last
 * measured) at most `maxBytes`; else DiskQuotaExceededError and nothing starts. After a command: its home and
 * workspace are measured in the background (a bounded walk by descriptors), and the next command waits for that
 * measurement only while it is still running; a refused session is measured again at once, so files removed since
 * (by the file tools, say) count.
 */
export class SessionDiskGuard {
  /** Workspace bytes before the session's first command. */
  private baseline: number | undefined;
  private used = 0;
  private measuring: Promise<void> | undefined;
  /** A command ended while a measurement ran: measure once more when it is done. */
  private again = false;
  private stopped = false;

  constructor(
    private readonly bounds: DiskBounds,
    private readonly places: GuardedPlaces,
  ) {}

  /** The usage last measured (home plus workspace growth). */
  get usedBytes(): number {
    return this.used;
  }

  /** Before a command (whose lease holds the workspace at `workspaceFd`): throws DiskQuotaExceededError. */
  async admit(workspaceFd: number): Promise<void> {
    if (this.measuring) await this.measuring;
    if (this.baseline === undefined) await this.measure(workspaceFd);
    if (this.used > this.bounds.maxBytes) await this.measure(workspaceFd);
    if (this.used > this.bounds.maxBytes) {
      throw new DiskQuotaExceededError(
        `DISK_QUOTA_EXCEEDED: this session's commands use ${mib(this.used)} of disk (its $HOME plus what they added to the workspace), over limits.sandbox_home_bytes (${mib(this.bounds.maxBytes)}); remove files, or close the session (its $HOME is removed then). The command did not start.`,
        { kind: 'usage', usedBytes: this.used, limitBytes: this.bounds.maxBytes },
      );
    }
    const { minFreeBytes, dataDir } = this.bounds;
    if (minFreeBytes === 0) return;
    const [dataFree, workspaceFree] = await Promise.all([
      freeBytes(dataDir),
      freeBytes(`/proc/self/fd/${workspaceFd}`),
    ]);
    const [free, where] = dataFree <= workspaceFree ? [dataFree, 'data directory'] : [workspaceFree, 'workspace'];
    if (free < minFreeBytes) {
      throw new DiskQuotaExceededError(
        `DISK_QUOTA_EXCEEDED: the file system of the ${where} has ${mib(free)} free, under limits.min_free_disk_bytes (${mib(minFreeBytes)}); commands are refused until space is freed. The command did not start.`,
        { kind: 'free_disk', freeBytes: free, minFreeBytes, path: where },
      );
    }
  }

  /** The session was closed: measurements still running report nothing more. */
  stop(): void {
    this.stopped = true;
  }

  /** After a command: measure in the background (a measurement running already is followed by one more). */
  measureAfter(): void {
    if (this.stopped) return;
    if (this.measuring) {
      this.again = true;
      return;
    }
    const run = async (): Promise<void> => {
      do {
        this.again = false;
        let lease;
        try {
          lease = this.places.workspace.acquire();
        } catch {
          return;
        }
        try {
          await this.measure(lease.fd);
        } catch {
          // A workspace or home gone meanwhile: the next command's admit measures again or fails on its own.
        } finally {
          lease.release();
        }
      } while (this.again);
    };
    this.measuring = run().finally(() => {
      this.measuring = undefined;
    });
  }

  private async measure(workspaceFd: number): Promise<void> {
    const [workspace, home] = await Promise.all([treeSize(workspaceFd), this.homeSize()]);
    this.baseline ??= workspace.bytes;
    this.used = home.bytes + Math.max(0, workspace.bytes - this.baseline);
    if (!this.stopped) this.places.onMeasured?.(this.used);
  }

  private async homeSize(): Promise<TreeSize> {
    let handle;
    try {
      handle = await open(this.places.home, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    } catch {
      return EMPTY;
    }
    try {
      return await treeSize(handle.fd);
    } finally {
      await handle.close();
    }
  }
}

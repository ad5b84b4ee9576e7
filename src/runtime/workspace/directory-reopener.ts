import type { FileHandle } from 'node:fs/promises';
import type { OpenedDirectory, WorkspaceFiles } from './workspace-files.js';

/** Subdirectories kept open between files (the start is always open). */
const DEFAULT_MAX_OPEN = 32;

interface Cached {
  readonly dir: OpenedDirectory;
  /** Opens in flight through this directory: it is not closed (its number not reused) until they are done. */
  pins: number;
}

/**
 * Opens files found by a walk again later, by their path below the walk's start directory: every directory
 * on the way is opened from the one above it with O_NOFOLLOW (`openDirectoryAt`) and the file with
 * `openFileAt`, so a directory or file swapped for a symlink since the walk fails (ELOOP/ENOTDIR) instead of
 * leading anywhere. The last directories used stay open (least recently used closed first), so files of
 * one directory cost one open each. `close()` closes them and, when it owns it, the start.
 */
export class DirectoryReopener {
  private readonly cache = new Map<string, Cached>();
  private closed = false;

  constructor(
    private readonly files: WorkspaceFiles,
    readonly start: OpenedDirectory,
    private readonly ownsStart: boolean,
    private readonly maxOpen = DEFAULT_MAX_OPEN,
  ) {}

  /** Opens the file `name` of the directory at `dir` (relative to the start, `/`-separated; '' for the start). */
  async openFile(dir: string, name: string): Promise<FileHandle> {
    if (this.closed) throw new Error('DirectoryReopener is closed');
    const cached = dir === '' ? undefined : this.directory(dir);
    if (cached) {
      cached.pins += 1;
      this.evict();
    }
    try {
      return await this.files.openFileAt(cached?.dir ?? this.start, name);
    } finally {
      if (cached) {
        cached.pins -= 1;
        this.evict();
      }
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const cached of this.cache.values()) cached.dir.close();
    this.cache.clear();
    if (this.ownsStart) this.start.close();
  }

  /** The open directory at `dir`, opened (component by component, from the nearest open one) when needed. */
  private directory(dir: string): Cached {
    const hit = this.cache.get(dir);
    if (hit) {
      // Most recently used last.
      this.cache.delete(dir);
      this.cache.set(dir, hit);
      return hit;
    }
    const slash = dir.lastIndexOf('/');
    const parent = slash === -1 ? undefined : this.directory(dir.slice(0, slash));
    // Synchronous: the parent cannot be closed between its lookup and this open.
    const opened: Cached = {
      dir: this.files.openDirectoryAt(parent?.dir ?? this.start, dir.slice(slash + 1)),
      pins: 0,
    };
    this.cache.set(dir, opened);
    return opened;
  }

  private evict(): void {
    if (this.cache.size <= this.maxOpen) return;
    for (const [key, cached] of this.cache) {
      if (this.cache.size <= this.maxOpen) break;
      if (cached.pins > 0) continue;
      this.cache.delete(key);
      cached.dir.close();
    }
  }
}

import { closeSync, constants, fstatSync, read, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { NotRegularFileError, notRegularKindOf } from './not-regular-file-error.js';
import type { OpenedDescriptor, OpenedFile, WorkspaceFiles } from './workspace-files.js';

/** How often a create that lost a race (the name appeared meanwhile) is tried again before giving up. */
const MAX_CREATE_ATTEMPTS = 8;

/** A regular file opened inside the workspace, and the fstat of its handle. */
export interface OpenedRegularFile extends OpenedFile {
  readonly stats: Stats;
}

/** A regular file opened inside the workspace as a raw descriptor, and its fstat. */
export interface OpenedRegularDescriptor extends OpenedDescriptor {
  readonly stats: Stats;
}

/** An opened regular file, and whether this open created it. */
export interface OpenedOrCreatedFile extends OpenedRegularFile {
  readonly created: boolean;
}

function errnoCode(error: unknown): string | undefined {
  return error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
}

/**
 * Opens the regular file a workspace path leads to (the confined walk of `WorkspaceFiles.open`: the last name
 * is never followed by the kernel and a FIFO never blocks), then verifies what was opened with fstat of the
 * handle: anything but a regular file is closed again and refused with NotRegularFileError. Nothing is read
 * or written before that check, so a name swapped meanwhile can only lead to another file inside.
 */
export async function openRegularFile(
  files: WorkspaceFiles,
  userPath: string,
  flags: number,
  options: { createParents?: boolean } = {},
): Promise<OpenedRegularFile> {
  let opened: OpenedFile;
  try {
    opened = await files.open(userPath, flags, options);
  } catch (error) {
    // Opening a directory for writing fails with EISDIR: the same refusal as fstat gives for reading.
    if (errnoCode(error) === 'EISDIR') throw new NotRegularFileError(userPath, 'directory');
    throw error;
  }
  let stats: Stats;
  try {
    stats = await opened.handle.stat();
  } catch (error) {
    await opened.handle.close().catch(() => undefined);
    throw error;
  }
  if (!stats.isFile()) {
    await opened.handle.close().catch(() => undefined);
    throw new NotRegularFileError(userPath, notRegularKindOf(stats));
  }
  return { ...opened, stats };
}

/**
 * `openRegularFile` for reading on the run path: the confined walk's last open and the fstat check done
 * synchronously on a raw descriptor (no FileHandle), anything but a regular file closed and refused with
 * NotRegularFileError. Read it with `readDescriptor` (asynchronous) and close it with closeSync.
 */
export function openRegularDescriptor(files: WorkspaceFiles, userPath: string, flags: number): OpenedRegularDescriptor {
  let opened: OpenedDescriptor;
  try {
    opened = files.openDescriptor(userPath, flags);
  } catch (error) {
    if (errnoCode(error) === 'EISDIR') throw new NotRegularFileError(userPath, 'directory');
    throw error;
  }
  let stats: Stats;
  try {
    stats = fstatSync(opened.fd);
  } catch (error) {
    closeSync(opened.fd);
    throw error;
  }
  if (!stats.isFile()) {
    closeSync(opened.fd);
    throw new NotRegularFileError(userPath, notRegularKindOf(stats));
  }
  return { ...opened, stats };
}

/** Reads up to `length` bytes into `buffer` at `offset` from the descriptor's position (null) or `position`. */
export function readDescriptor(
  fd: number,
  buffer: Buffer,
  offset: number,
  length: number,
  position: number | null,
): Promise<number> {
  return new Promise((resolve, reject) => {
    read(fd, buffer, offset, length, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead)));
  });
}

/**
 * The regular file at a workspace path opened with `flags` (never O_TRUNC: truncate through the handle once it
 * is known to be a regular file), or, when there is none, a new one created with O_CREAT|O_EXCL where the
 * confined walk leads (missing parents created through the walk): a file is never created outside first, and
 * `created` says truly whether this call made it.
 */
export async function openOrCreateRegularFile(
  files: WorkspaceFiles,
  userPath: string,
  flags: number,
): Promise<OpenedOrCreatedFile> {
  for (let attempt = 1; ; attempt++) {
    try {
      return { ...(await openRegularFile(files, userPath, flags)), created: false };
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT') throw error;
    }
    try {
      return {
        ...(await openRegularFile(files, userPath, flags | constants.O_CREAT | constants.O_EXCL, {
          createParents: true,
        })),
        created: true,
      };
    } catch (error) {
      // The name appeared since (another writer, or a symlink put there): open what is there now, confined.
      if (errnoCode(error) !== 'EEXIST' || attempt >= MAX_CREATE_ATTEMPTS) throw error;
    }
  }
}

/** Up to `length` bytes of the file from `position` (fewer at its end), read through the handle. */
export async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  // Only the bytes read are handed out.
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/** Writes all of `data` through the handle at `position` (null: at the file position, the end with O_APPEND). */
export async function writeAll(handle: FileHandle, data: Buffer, position: number | null): Promise<void> {
  let written = 0;
  while (written < data.length) {
    const { bytesWritten } = await handle.write(
      data,
      written,
      data.length - written,
      position === null ? null : position + written,
    );
    written += bytesWritten;
  }
}

/** Replaces the file's content through the handle: truncated to nothing, then written from byte 0. */
export async function replaceContent(handle: FileHandle, content: string): Promise<void> {
  await handle.truncate(0);
  await writeAll(handle, Buffer.from(content, 'utf8'), 0);
}

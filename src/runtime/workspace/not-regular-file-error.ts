import type { Stats } from 'node:fs';

/** What a path led to instead of a regular file. */
export type NotRegularKind = 'directory' | 'fifo' | 'socket' | 'device' | 'other';

const WORDS: Readonly<Record<NotRegularKind, string>> = {
  directory: 'a directory',
  fifo: 'a FIFO',
  socket: 'a socket',
  device: 'a device',
  other: 'a special file',
};

/** The kind of a non-regular file from the fstat of what was opened. */
export function notRegularKindOf(stats: Stats): NotRegularKind {
  if (stats.isDirectory()) return 'directory';
  if (stats.isFIFO()) return 'fifo';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'device';
  return 'other';
}

/**
 * A path opened for its content led (confined) to something that is not a regular file: a directory, a FIFO,
 * a device, a socket. One class for the file tools and for the files the server reads from a workspace
 * (instruction files, skills, agents), so every caller tells it apart the same way.
 */
export class NotRegularFileError extends Error {
  override readonly name = 'NotRegularFileError';

  constructor(
    readonly userPath: string,
    readonly kind: NotRegularKind,
  ) {
    // The tools' wording (their outputs are part of the contract): "x is a directory, not a file." / "x is not a regular file."
    super(kind === 'directory' ? `${userPath} is a directory, not a file.` : `${userPath} is not a regular file.`);
  }

  /** "a directory", "a FIFO", ...: for messages about files the server read on its own. */
  get description(): string {
    return WORDS[this.kind];
  }
}

import type { ChangedFile, ChangeRange, ChangeSet } from '../client/index.js';

const LETTER: Readonly<Record<ChangedFile['status'], string>> = {
  added: 'A',
  modified: 'M',
  deleted: 'D',
  renamed: 'R',
};

/** The patch of a change set as its bytes (git's unified diff, `git apply --binary` applies it). */
export function patchBytes(changes: ChangeSet | ChangeRange): Uint8Array {
  return Buffer.from(changes.patch_base64, 'base64');
}

/**
 * `--stat`: one line per file, `<A|M|D|R>\t+<added>\t-<removed>\t<path>` (`bin` for both counts of a binary file,
 * ` (from <old path>)` after a rename), then `N files changed, +A -D`.
 */
export function statLines(changes: ChangeSet | ChangeRange): string {
  const lines = changes.files.map((file) => {
    const counts = file.binary ? 'bin\tbin' : `+${file.additions}\t-${file.deletions}`;
    const from = file.oldPath !== undefined ? ` (from ${file.oldPath})` : '';
    return `${LETTER[file.status]}\t${counts}\t${file.path}${from}\n`;
  });
  const added = changes.files.reduce((sum, file) => sum + file.additions, 0);
  const removed = changes.files.reduce((sum, file) => sum + file.deletions, 0);
  const n = changes.files.length;
  return `${lines.join('')}${n} file${n === 1 ? '' : 's'} changed, +${added} -${removed}\n`;
}

/** The stderr note of what the capture left out, or '' (`[changes] not captured: a (excluded), b (too_large)`). */
export function notCapturedNote(changes: ChangeSet | ChangeRange): string {
  if (changes.not_captured.length === 0) return '';
  const shown = changes.not_captured.slice(0, 10).map((entry) => `${entry.path} (${entry.reason})`);
  const more = changes.not_captured.length > 10 ? `, and ${changes.not_captured.length - 10} more` : '';
  return `[changes] not captured: ${shown.join(', ')}${more}\n`;
}

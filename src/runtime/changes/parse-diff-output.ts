import type { ChangedFile, NotCaptured } from '../../protocol/change-set.js';

/** The most not-captured entries a change set lists. */
export const MAX_NOT_CAPTURED = 1000;

function fields(data: Buffer): string[] {
  const parts = data.toString('utf8').split('\0');
  if (parts.at(-1) === '') parts.pop();
  return parts;
}

/** `find -fprintf '%P\0'` of the pruned paths and `'%s %P\0'` of the files too large: the change set's not_captured. */
export function parseNotCaptured(excluded: Buffer, big: Buffer): NotCaptured[] {
  const found: NotCaptured[] = fields(excluded).map((path) => ({ path, reason: 'excluded' as const }));
  for (const entry of fields(big)) {
    const space = entry.indexOf(' ');
    if (space > 0)
      found.push({ path: entry.slice(space + 1), reason: 'too_large', bytes: Number(entry.slice(0, space)) });
  }
  return found.slice(0, MAX_NOT_CAPTURED);
}

const STATUS: Record<string, ChangedFile['status']> = {
  A: 'added',
  M: 'modified',
  D: 'deleted',
  R: 'renamed',
  T: 'modified',
};

/**
 * The changed files from `git diff --raw -z` (status, new blob, paths), `--numstat -z` (lines, `-` for binary) and
 * `cat-file --batch-check` of the new blobs (their sizes).
 */
export function parseChangedFiles(raw: Buffer, numstat: Buffer, sizes: Buffer): ChangedFile[] {
  const blobBytes = new Map<string, number>();
  for (const line of sizes.toString('utf8').split('\n')) {
    const [sha, size] = line.split(' ');
    if (sha && size && /^\d+$/.test(size)) blobBytes.set(sha, Number(size));
  }
  const lines = new Map<string, { additions: number; deletions: number; binary: boolean }>();
  const stats = fields(numstat);
  for (let index = 0; index < stats.length; index++) {
    // A path may hold tabs itself: only the first two separate fields.
    const [, added = '', deleted = '', path = ''] = /^([^\t]*)\t([^\t]*)\t(.*)$/s.exec(stats[index] as string) ?? [];
    let key = path;
    // A rename's numstat is `added\tdeleted\t` followed by the old and the new path.
    if (path === '') {
      key = stats[index + 2] ?? '';
      index += 2;
    }
    const binary = added === '-' && deleted === '-';
    lines.set(key, { additions: binary ? 0 : Number(added), deletions: binary ? 0 : Number(deleted), binary });
  }
  const files: ChangedFile[] = [];
  const entries = fields(raw);
  for (let index = 0; index < entries.length; index++) {
    const meta = entries[index] as string;
    if (!meta.startsWith(':')) continue;
    const [, , , newSha = '', letters = ''] = meta.slice(1).split(' ');
    const status = STATUS[letters.charAt(0)];
    const renamed = letters.startsWith('R') || letters.startsWith('C');
    const oldPath = renamed ? entries[index + 1] : undefined;
    const path = entries[index + (renamed ? 2 : 1)] ?? '';
    index += renamed ? 2 : 1;
    if (status === undefined) continue;
    const counted = lines.get(path) ?? { additions: 0, deletions: 0, binary: false };
    files.push({
      path,
      status,
      ...(oldPath !== undefined && letters.startsWith('R') ? { oldPath } : {}),
      ...counted,
      bytes: status === 'deleted' ? 0 : (blobBytes.get(newSha) ?? 0),
    });
  }
  return files;
}

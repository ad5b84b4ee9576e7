import type { ChangedFile, ChangeSet } from '../../src/protocol/change-set.js';
import { el } from './el.js';
import { decodePatch, parseGitPatch, type DiffHunk, type DiffSection } from './unified-diff.js';

/** The most diff lines one file shows, and one change set (a 4 MiB patch would be a very long page). */
const MAX_FILE_LINES = 2000;
const MAX_TOTAL_LINES = 10_000;

/** The patch section of each changed file: by its path (the old one for a deletion), else by position. */
function sectionsByFile(files: ChangedFile[], sections: DiffSection[]): Array<DiffSection | undefined> {
  const used = new Set<DiffSection>();
  const byPath = files.map((file) => {
    const found = sections.find(
      (s) => !used.has(s) && (file.status === 'deleted' ? s.oldPath === file.path : s.newPath === file.path),
    );
    if (found) used.add(found);
    return found;
  });
  return byPath.map((found, index) => {
    if (found) return found;
    const same = sections[index];
    if (same === undefined || used.has(same)) return undefined;
    used.add(same);
    return same;
  });
}

function bytesText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function fileName(file: ChangedFile): HTMLElement {
  return el(
    'span',
    { class: 'diff-path' },
    file.oldPath !== undefined ? el('code', {}, file.oldPath) : null,
    file.oldPath !== undefined ? ' → ' : null,
    el('code', {}, file.path),
  );
}

function counts(file: ChangedFile): HTMLElement {
  if (file.binary) return el('span', { class: 'diff-counts muted' }, `binary, ${bytesText(file.bytes)}`);
  return el(
    'span',
    { class: 'diff-counts', 'aria-label': `${file.additions} added, ${file.deletions} removed` },
    el('span', { class: 'diff-plus' }, `+${file.additions}`),
    ' ',
    el('span', { class: 'diff-minus' }, `−${file.deletions}`),
  );
}

/** The status as a chip: added, modified, deleted or renamed. */
function statusTag(file: ChangedFile): HTMLElement {
  return el('span', { class: `chip diff-status diff-status-${file.status}` }, file.status);
}

const SIGN = { add: '+', del: '-', ctx: ' ', note: '\\' } as const;

/** One hunk as rows of old number, new number and the line (text nodes only: lines are the model's). */
function hunkView(hunk: DiffHunk, budget: { left: number }): HTMLElement {
  const rows: HTMLElement[] = [];
  for (const line of hunk.lines) {
    if (budget.left <= 0) break;
    budget.left -= 1;
    rows.push(
      el(
        'div',
        { class: `diff-line diff-${line.kind}` },
        el('span', { class: 'diff-no', 'aria-hidden': 'true' }, line.oldNo ?? ''),
        el('span', { class: 'diff-no', 'aria-hidden': 'true' }, line.newNo ?? ''),
        el('span', { class: 'diff-sign' }, SIGN[line.kind]),
        el('span', { class: 'diff-text' }, line.text),
      ),
    );
  }
  return el('div', { class: 'diff-hunk' }, el('div', { class: 'diff-hunk-head' }, hunk.header), ...rows);
}

/** One file's unified diff, folded under its name, status and counts; at most `budget.left` lines shown. */
function fileView(file: ChangedFile, section: DiffSection | undefined, budget: { left: number }): HTMLElement {
  let body: HTMLElement;
  if (file.binary || section?.binary) body = el('p', { class: 'muted' }, `Binary file (${bytesText(file.bytes)}).`);
  else if (!section || section.hunks.length === 0)
    body = el('p', { class: 'muted' }, 'No line changes (a rename or a mode change).');
  else {
    const total = section.hunks.reduce((n, hunk) => n + hunk.lines.length, 0);
    const mine = { left: Math.min(MAX_FILE_LINES, budget.left) };
    const start = mine.left;
    const hunks: HTMLElement[] = [];
    for (const hunk of section.hunks) if (mine.left > 0) hunks.push(hunkView(hunk, mine));
    const shown = start - mine.left;
    budget.left -= shown;
    body = el(
      'div',
      { class: 'diff-body' },
      ...hunks,
      shown < total ? el('p', { class: 'muted diff-more' }, `${total - shown} more line(s) not shown.`) : null,
    );
  }
  return el(
    'details',
    { class: 'diff-file', 'data-path': file.path, 'data-status': file.status, open: true },
    el('summary', {}, statusTag(file), ' ', fileName(file), ' ', counts(file)),
    body,
  );
}

/**
 * A run's change set as a person reads it: the changed files (status, +/- counts) and, per file, its unified diff
 * with added and removed lines marked. Every name and line is a text node.
 */
export function diffView(changes: ChangeSet): HTMLElement {
  const files = changes.files;
  const sections =
    changes.truncated || changes.patch_base64 === '' ? [] : parseGitPatch(decodePatch(changes.patch_base64));
  const matched = sectionsByFile(files, sections);
  const added = files.reduce((n, f) => n + f.additions, 0);
  const removed = files.reduce((n, f) => n + f.deletions, 0);
  const budget = { left: MAX_TOTAL_LINES };
  const list = el(
    'ul',
    { class: 'diff-files' },
    ...files.map((file) =>
      el(
        'li',
        { 'data-path': file.path, 'data-status': file.status },
        statusTag(file),
        ' ',
        fileName(file),
        ' ',
        counts(file),
      ),
    ),
  );
  const notCaptured = changes.not_captured;
  return el(
    'div',
    { class: 'diff' },
    el(
      'p',
      { class: 'diff-summary' },
      files.length === 0
        ? 'No file changed.'
        : `${files.length} file(s) changed, +${added} −${removed} · patch ${bytesText(changes.patch_bytes)}`,
    ),
    files.length > 0 ? list : null,
    changes.truncated
      ? el('p', { class: 'notice notice-warn' }, 'The patch was too large to keep: only the list of files is shown.')
      : null,
    ...(changes.truncated ? [] : files.map((file, index) => fileView(file, matched[index], budget))),
    notCaptured.length > 0
      ? el(
          'details',
          { class: 'diff-not-captured' },
          el('summary', {}, `Not captured (${notCaptured.length})`),
          el(
            'ul',
            {},
            ...notCaptured.map((n) =>
              el(
                'li',
                {},
                el('code', {}, n.path),
                ` ${n.reason.replace('_', ' ')}${n.bytes !== undefined ? `, ${bytesText(n.bytes)}` : ''}`,
              ),
            ),
          ),
        )
      : null,
  );
}

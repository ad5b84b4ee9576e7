/** One line of a hunk: its kind, its text without the +/-/space marker, and its line numbers. */
export interface DiffLine {
  kind: 'add' | 'del' | 'ctx' | 'note';
  text: string;
  oldNo?: number;
  newNo?: number;
}

/** One hunk: its `@@ -a,b +c,d @@ context` header and its lines. */
export interface DiffHunk {
  header: string;
  lines: DiffLine[];
}

/** One file's part of a git patch (`diff --git ...` up to the next one). */
export interface DiffSection {
  /** The path before (absent for an added file), without git's `a/` prefix. */
  oldPath?: string;
  /** The path after (absent for a deleted file), without git's `b/` prefix. */
  newPath?: string;
  /** `GIT binary patch` or `Binary files ... differ`: no hunks to show. */
  binary: boolean;
  hunks: DiffHunk[];
}

const ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/**
 * A name as git writes it in a patch header: as is, or C-quoted (`"a/caf\303\251 \"x\""`) when it has a quote,
 * a backslash, a control or a non-ASCII byte. Answers the name and what follows it on the line.
 */
export function readGitName(text: string): { name: string; rest: string } {
  if (!text.startsWith('"')) return { name: text, rest: '' };
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  let i = 1;
  while (i < text.length && text[i] !== '"') {
    const c = text[i] as string;
    if (c !== '\\') {
      bytes.push(...encoder.encode(c));
      i += 1;
      continue;
    }
    const next = text[i + 1] ?? '';
    const octal = /^[0-7]{3}/.exec(text.slice(i + 1, i + 4));
    if (octal) {
      bytes.push(parseInt(octal[0], 8));
      i += 4;
    } else {
      bytes.push(ESCAPES[next] ?? next.charCodeAt(0));
      i += 2;
    }
  }
  return { name: new TextDecoder().decode(new Uint8Array(bytes)), rest: text.slice(i + 1) };
}

/** A `---`/`+++` name: undefined for /dev/null, else without its `a/`/`b/` prefix (and git's tab after a name with a space). */
function headerPath(text: string, prefix: 'a/' | 'b/'): string | undefined {
  const raw = text.endsWith('\t') ? text.slice(0, -1) : text;
  if (raw === '/dev/null') return undefined;
  const { name } = readGitName(raw);
  return name.startsWith(prefix) ? name.slice(2) : name;
}

/** The paths of `diff --git a/X b/Y` when they can be told apart (quoted, or the same path twice). */
function gitLinePaths(text: string): { oldPath?: string; newPath?: string } {
  if (text.startsWith('"')) {
    const first = readGitName(text);
    const second = readGitName(first.rest.trimStart());
    return { oldPath: first.name.replace(/^a\//, ''), newPath: second.name.replace(/^b\//, '') };
  }
  const n = (text.length - 5) / 2;
  if (Number.isInteger(n) && text.startsWith('a/') && text.slice(2 + n, 5 + n) === ' b/') {
    const a = text.slice(2, 2 + n);
    if (a === text.slice(5 + n)) return { oldPath: a, newPath: a };
  }
  return {};
}

const RENAME = /^rename (from|to) (.*)$/;
const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** Read one hunk starting at `lines[start]` (its header), by the counts its header gives; answers it and the next index. */
function readHunk(lines: string[], start: number): { hunk: DiffHunk; next: number } {
  const header = lines[start] as string;
  const match = HUNK.exec(header) as RegExpExecArray;
  let oldNo = Number(match[1]);
  let newNo = Number(match[3]);
  let oldLeft = match[2] === undefined ? 1 : Number(match[2]);
  let newLeft = match[4] === undefined ? 1 : Number(match[4]);
  const hunk: DiffHunk = { header, lines: [] };
  let i = start + 1;
  for (; i < lines.length; i++) {
    const line = lines[i] as string;
    const mark = line.charAt(0);
    if (mark === '\\') hunk.lines.push({ kind: 'note', text: line.slice(1).trim() });
    else if (oldLeft === 0 && newLeft === 0) break;
    else if (mark === '+') {
      hunk.lines.push({ kind: 'add', text: line.slice(1), newNo: newNo++ });
      newLeft -= 1;
    } else if (mark === '-') {
      hunk.lines.push({ kind: 'del', text: line.slice(1), oldNo: oldNo++ });
      oldLeft -= 1;
    } else if (mark === ' ' || line === '') {
      hunk.lines.push({ kind: 'ctx', text: line.slice(1), oldNo: oldNo++, newNo: newNo++ });
      oldLeft -= 1;
      newLeft -= 1;
    } else break;
  }
  return { hunk, next: i };
}

/**
 * Parse a git patch (`git diff --binary -M`) into its files' sections. Hunks are read by their header's counts,
 * so a removed line that reads `--- x` or `diff --git` is a line, not a header; binary data is skipped.
 */
export function parseGitPatch(patch: string): DiffSection[] {
  const lines = patch.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const sections: DiffSection[] = [];
  let current: DiffSection | undefined;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    if (line.startsWith('diff --git ')) {
      current = { ...gitLinePaths(line.slice(11)), binary: false, hunks: [] };
      sections.push(current);
    } else if (current && !current.binary) {
      if (HUNK.test(line)) {
        const { hunk, next } = readHunk(lines, i);
        current.hunks.push(hunk);
        i = next;
        continue;
      }
      if (line.startsWith('--- ')) current.oldPath = headerPath(line.slice(4), 'a/');
      else if (line.startsWith('+++ ')) current.newPath = headerPath(line.slice(4), 'b/');
      else if (RENAME.test(line)) {
        // `rename from X` / `rename to X` (a regex: the bundle test refuses a string literal ending in "from ").
        const [, side, name] = RENAME.exec(line) as RegExpExecArray;
        current[side === 'to' ? 'newPath' : 'oldPath'] = readGitName(name as string).name;
      } else if (line.startsWith('new file mode')) delete current.oldPath;
      else if (line.startsWith('deleted file mode')) delete current.newPath;
      else if (line === 'GIT binary patch' || /^Binary files .* differ$/.test(line)) current.binary = true;
    }
    i += 1;
  }
  return sections;
}

/** The text of a base64 patch (bytes that are not UTF-8 show as U+FFFD). */
export function decodePatch(base64: string): string {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}

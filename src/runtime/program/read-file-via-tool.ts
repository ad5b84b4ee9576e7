import type { ProgramToolResult } from './program-types.js';

/** Runs one tool call on behalf of `readFileViaTool` (through the program's gate, so it is counted). */
export type ReadToolCall = (name: string, args: unknown) => Promise<ProgramToolResult>;

// One numbered line of the read tool's output: the number right-aligned, a tab, then the text.
const NUMBERED_LINE = /^ *(\d+)\t(.*)$/s;
const CONTINUE_NOTE = /Call read with offset=\d+ to continue/;

interface Page {
  readonly lines: string[];
  /** Whatever followed the numbered lines (the read tool's notes). */
  readonly trailer: string;
}

function parsePage(output: string, firstLine: number): Page {
  const rows = output.split('\n');
  const lines: string[] = [];
  let index = 0;
  for (; index < rows.length; index++) {
    const match = NUMBERED_LINE.exec(rows[index]);
    if (!match || Number(match[1]) !== firstLine + lines.length) break;
    lines.push(match[2]);
  }
  return { lines, trailer: rows.slice(index).join('\n') };
}

/**
 * The plain text of one read result (its numbered lines without the anchors and the footer), or null
 * when the result is a failure or not in the read tool's numbered form. This is `text` in `ctx.read`.
 */
export function readResultText(result: ProgramToolResult, args: unknown): string | null {
  if (result.exitCode !== 0) return null;
  if (result.metadata?.lines === 0 || result.output.trim() === '(File is empty.)') return '';
  const offset = (args as { offset?: unknown } | null)?.offset;
  const page = parsePage(result.output, typeof offset === 'number' && offset >= 1 ? offset : 1);
  return page.lines.length > 0 ? page.lines.join('\n') : null;
}

function hasMore(result: ProgramToolResult, page: Page): boolean {
  const flag = result.metadata?.has_more;
  return typeof flag === 'boolean' ? flag : CONTINUE_NOTE.test(page.trailer);
}

/**
 * `ctx.readFile(path)`: the file's text rebuilt from the read tool's numbered output, paging with
 * `offset` while the file has more lines (each page is one tool call). Lines come back joined with
 * "\n" and without a final newline; lines over the read tool's length cap arrive cut as it cuts them.
 * With `options` (the read tool's `offset`/`limit`) it makes one call and returns those lines.
 * Throws when the read fails.
 */
export async function readFileViaTool(
  call: ReadToolCall,
  path: string,
  options?: Record<string, unknown>,
): Promise<string> {
  if (options && Object.keys(options).length > 0) {
    // Explicit read options (offset, limit): one read call, its lines as text.
    const args = { ...options, file_path: path };
    const result = await call('read', args);
    if (result.exitCode !== 0) throw new Error(`readFile(${JSON.stringify(path)}) failed: ${result.output}`);
    const text = readResultText(result, args);
    if (text === null)
      throw new Error(
        `readFile(${JSON.stringify(path)}): the read tool answered in an unexpected form; use ctx.read instead`,
      );
    return text;
  }
  const collected: string[] = [];
  let offset = 1;
  for (;;) {
    const result = await call('read', offset === 1 ? { file_path: path } : { file_path: path, offset });
    if (result.exitCode !== 0) throw new Error(`readFile(${JSON.stringify(path)}) failed: ${result.output}`);
    const page = parsePage(result.output, offset);
    if (page.lines.length === 0) {
      if (offset === 1 && (result.metadata?.lines === 0 || result.output.trim() === '(File is empty.)')) return '';
      throw new Error(
        `readFile(${JSON.stringify(path)}): the read tool answered in an unexpected form; use ctx.read instead`,
      );
    }
    if (result.truncated) {
      // The invoker cut this page: its last line may be partial, so read on from that line.
      if (page.lines.length < 2)
        throw new Error(
          `readFile(${JSON.stringify(path)}): line ${offset} is too long to page through; use ctx.read instead`,
        );
      page.lines.pop();
      collected.push(...page.lines);
      offset += page.lines.length;
      continue;
    }
    collected.push(...page.lines);
    if (!hasMore(result, page)) return collected.join('\n');
    offset += page.lines.length;
  }
}

/** Brace expansions larger than this stay one pattern (picomatch then matches `{a,b}` as an alternation). */
const MAX_EXPANSIONS = 1024;
/** Ranges with more elements than this are not expanded (the same limit as the `braces` package). */
const MAX_RANGE = 1000;

type Node = string | Group;
interface Group {
  /** The alternatives, each a sequence of nodes; a range is already expanded into literal alternatives. */
  readonly alternatives: Node[][];
}

/** The text of a `{x..y[..step]}` body as its elements, or null when it is not a valid range. */
function expandRange(body: string): string[] | null {
  const match = /^(-?\d+|[^\d\\{},.])\.\.(-?\d+|[^\d\\{},.])(?:\.\.(-?\d+))?$/.exec(body);
  if (!match) return null;
  const [, from, to, stepText] = match;
  const step = Math.abs(Number(stepText ?? 1)) || 1;
  // Two numbers count; otherwise two single characters (`{a..3}` runs over the character codes, as `braces` does).
  const numeric = /\d/.test(from) && /\d/.test(to);
  if (!numeric && (from.length !== 1 || to.length !== 1)) return null;
  const start = numeric ? Number(from) : from.charCodeAt(0);
  const end = numeric ? Number(to) : to.charCodeAt(0);
  if (Math.abs(end - start) / step + 1 > MAX_RANGE) return null;
  // Zero-padded when either end is (`{01..10}`), to the longer end's width.
  const padded = numeric && (/^-?0\d/.test(from) || /^-?0\d/.test(to));
  const width = Math.max(from.replace('-', '').length, to.replace('-', '').length);
  const out: string[] = [];
  for (let value = start; start <= end ? value <= end : value >= end; value += start <= end ? step : -step) {
    if (!numeric) out.push(String.fromCharCode(value));
    else if (!padded) out.push(String(value));
    else out.push(`${value < 0 ? '-' : ''}${String(Math.abs(value)).padStart(width, '0')}`);
  }
  return out;
}

/** Parses `pattern` from `start` until an unmatched `}` (inside a group) or the end. */
class BraceParser {
  private at = 0;

  constructor(private readonly pattern: string) {}

  /** The nodes of the whole pattern. */
  parse(): Node[] {
    return this.sequence(false).nodes;
  }

  /** A sequence up to the end, or (in a group) up to the `,` or `}` that ends the alternative. */
  private sequence(inGroup: boolean): { nodes: Node[]; stop: string | null } {
    const nodes: Node[] = [];
    let text = '';
    const flush = (): void => {
      if (text !== '') nodes.push(text);
      text = '';
    };
    const p = this.pattern;
    while (this.at < p.length) {
      const char = p[this.at];
      if (char === '\\') {
        // An escaped character is literal (the backslash is kept for the matcher).
        text += p.slice(this.at, this.at + 2);
        this.at += 2;
      } else if (char === '[') {
        // A bracket expression is literal up to its `]` (braces inside it are not expanded).
        const close = p.indexOf(']', this.at + 2);
        const end = close === -1 ? this.at + 1 : close + 1;
        text += p.slice(this.at, end);
        this.at = end;
      } else if (inGroup && (char === ',' || char === '}')) {
        this.at += 1;
        flush();
        return { nodes, stop: char };
      } else if (char === '{' && p[this.at - 1] !== '$') {
        const group = this.group();
        if (typeof group === 'string') text += group;
        else {
          flush();
          nodes.push(group);
        }
      } else {
        text += char;
        this.at += 1;
      }
    }
    flush();
    return { nodes, stop: null };
  }

  /** A `{...}` group: alternatives, a range, or (no comma, no range, unmatched) literal text. */
  private group(): Group | string {
    const open = this.at;
    this.at += 1;
    const alternatives: Node[][] = [];
    for (;;) {
      const { nodes, stop } = this.sequence(true);
      alternatives.push(nodes);
      if (stop === '}') break;
      if (stop === null) {
        // Never closed: the `{` is literal and what follows it is parsed again as plain text.
        this.at = open + 1;
        return '{';
      }
    }
    if (alternatives.length > 1) return { alternatives };
    const body = this.pattern.slice(open + 1, this.at - 1);
    const range = expandRange(body);
    if (range) return { alternatives: range.map((item) => [item]) };
    // `{a}` and `{}` are literal braces (their content still expands: `{a{b,c}}` is `{ab}`, `{ac}`).
    return { alternatives: [['{', ...alternatives[0], '}']] };
  }
}

/** Every string a node sequence stands for, or null beyond MAX_EXPANSIONS. */
function expandNodes(nodes: readonly Node[]): string[] | null {
  let results = [''];
  for (const node of nodes) {
    if (typeof node === 'string') {
      results = results.map((prefix) => prefix + node);
      continue;
    }
    const options: string[] = [];
    for (const alternative of node.alternatives) {
      const expanded = expandNodes(alternative);
      if (!expanded) return null;
      options.push(...expanded);
    }
    if (results.length * options.length > MAX_EXPANSIONS) return null;
    results = results.flatMap((prefix) => options.map((option) => prefix + option));
  }
  return results;
}

/**
 * The patterns a glob's brace expressions stand for, as fast-glob expands them before matching (`braces`
 * with expand, nodupes and keepEscaping): `{a,b}` alternatives (nested, empty ones too), `{1..3}`, `{01..10}`,
 * `{a..e}` and `{1..9..2}` ranges; escaped braces, braces inside `[...]` and `${...}` stay literal. Sorted by
 * length like fast-glob; empty results dropped.
 */
export function expandBraces(pattern: string): string[] {
  if (!pattern.includes('{')) return [pattern];
  const expanded = expandNodes(new BraceParser(pattern).parse()) ?? [pattern];
  return [...new Set(expanded)].filter((item) => item !== '').sort((a, b) => a.length - b.length);
}

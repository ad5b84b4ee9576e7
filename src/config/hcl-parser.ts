/**
 * A hand-written parser for the HCL subset used by the seed's ACL config files, plus a strict JSON mode
 * that shares it so JSON config files get line numbers too.
 *
 * Supported: `key = value` attributes; strings with escapes; numbers; true/false/null; lists; objects;
 * `env("NAME")` / `env("NAME", "default")`; heredocs (`<<EOF`, `<<-EOF`); blocks with zero or more
 * labels; `#`, `//` and `/* *\/` comments. String templates (`${...}`) are rejected rather than silently
 * kept literal; write `$${` for a literal `${`.
 */
import { HclParseError } from './hcl-parse-error.js';
import { tokenize, type LexMode, type Token, type TokenType } from './hcl-lexer.js';

/** A value produced by the parser: a plain JSON-like tree. */
export type HclValue = string | number | boolean | null | HclValue[] | HclObject;

/** An object (attribute body, block body or object constructor) produced by the parser. */
export interface HclObject {
  [key: string]: HclValue;
}

/** The parsed tree plus the line where each key path was defined (keys formatted by `formatPath`). */
export interface HclParseResult {
  value: HclObject;
  lines: Map<string, number>;
}

/** Options for `parseHcl`: the environment `env()` calls read from. */
export interface HclParseOptions {
  env?: Readonly<Record<string, string | undefined>>;
}

/** One segment of a key path: an object key or a list index. */
export type PathSegment = string | number;

const IDENT_SEGMENT = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** Formats a key path for messages and line maps: `providers.openai.models["gpt-4.1"]`, `apiTokens[0].token`. */
export function formatPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else {
      const key = String(segment);
      if (IDENT_SEGMENT.test(key)) out += out === '' ? key : `.${key}`;
      else out += `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}

/** Defines an own enumerable property, so keys such as `__proto__` stay data instead of touching prototypes. */
export function setOwn(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

type Definition =
  | { kind: 'attribute'; line: number }
  | { kind: 'block'; line: number; count: number }
  | { kind: 'labeled'; line: number; labels: number };

/** Recursive-descent parser over the token list; records the line of every key path it defines. */
class Parser {
  private pos = 0;
  readonly lines = new Map<string, number>();

  constructor(
    private readonly tokens: Token[],
    private readonly mode: LexMode,
    private readonly env: Readonly<Record<string, string | undefined>>,
  ) {}

  parseDocument(): HclObject {
    const body = this.parseBody(null, []);
    return body;
  }

  parseJsonDocument(): HclValue {
    const value = this.parseValue([]);
    const t = this.peek();
    if (t.type !== 'eof') this.fail(`unexpected ${describe(t)} after the JSON value`, t);
    return value;
  }

  private peek(): Token {
    return this.tokens[this.pos] ?? this.tokens[this.tokens.length - 1]!;
  }

  private next(): Token {
    const t = this.peek();
    if (t.type !== 'eof') this.pos++;
    return t;
  }

  private expect(type: TokenType, what: string): Token {
    const t = this.next();
    if (t.type !== type) this.fail(`expected ${what} but found ${describe(t)}`, t);
    return t;
  }

  private fail(reason: string, at: Token): never {
    throw new HclParseError(reason, at.line, at.column);
  }

  private record(path: PathSegment[], line: number): void {
    this.lines.set(formatPath(path), line);
  }

  /** Parses attributes and blocks until `}` (when `open` is set) or end of file. */
  private parseBody(open: Token | null, path: PathSegment[]): HclObject {
    const obj: HclObject = {};
    const defs = new Map<string, Definition>();
    for (;;) {
      const t = this.next();
      if (t.type === 'eof') {
        if (open !== null)
          this.fail(`unexpected end of file: missing '}' for the block opened at line ${open.line}`, t);
        return obj;
      }
      if (t.type === '}' && open !== null) return obj;
      if (t.type !== 'ident') this.fail(`expected an attribute or block name but found ${describe(t)}`, t);
      const name = t.text;
      const prev = defs.get(name);
      const after = this.peek();
      if (after.type === '=') {
        this.next();
        if (prev?.kind === 'attribute')
          this.fail(`duplicate attribute "${name}" at line ${t.line}: already defined at line ${prev.line}`, t);
        if (prev !== undefined)
          this.fail(`attribute "${name}" at line ${t.line} conflicts with the block defined at line ${prev.line}`, t);
        defs.set(name, { kind: 'attribute', line: t.line });
        this.record([...path, name], t.line);
        setOwn(obj, name, this.parseValue([...path, name]));
        continue;
      }
      const labels: Token[] = [];
      while (this.peek().type === 'string' || this.peek().type === 'ident') labels.push(this.next());
      const brace = this.next();
      if (brace.type !== '{') {
        const hint = labels.length === 0 ? `'=' or '{' after "${name}"` : `'{' to open block "${name}"`;
        this.fail(`expected ${hint} but found ${describe(brace)}`, brace);
      }
      if (prev?.kind === 'attribute')
        this.fail(`block "${name}" at line ${t.line} conflicts with the attribute defined at line ${prev.line}`, t);
      if (labels.length === 0) this.addBlock(obj, defs, prev, t, brace, path);
      else this.addLabeledBlock(obj, defs, prev, t, labels, brace, path);
    }
  }

  private addBlock(
    obj: HclObject,
    defs: Map<string, Definition>,
    prev: Definition | undefined,
    t: Token,
    brace: Token,
    path: PathSegment[],
  ): void {
    const name = t.text;
    if (prev?.kind === 'labeled')
      this.fail(`block "${name}" at line ${t.line} has no label but the one at line ${prev.line} has labels`, t);
    if (prev === undefined) {
      defs.set(name, { kind: 'block', line: t.line, count: 1 });
      this.record([...path, name], t.line);
      setOwn(obj, name, this.parseBody(brace, [...path, name]));
      return;
    }
    const def = prev as { kind: 'block'; line: number; count: number };
    if (def.count === 1) {
      // The second block of this name turns the single object into a list; move its recorded lines.
      rekey(this.lines, formatPath([...path, name]), formatPath([...path, name, 0]));
      this.record([...path, name], def.line);
      setOwn(obj, name, [obj[name] as HclValue]);
    }
    this.record([...path, name, def.count], t.line);
    (obj[name] as HclValue[]).push(this.parseBody(brace, [...path, name, def.count]));
    def.count++;
  }

  private addLabeledBlock(
    obj: HclObject,
    defs: Map<string, Definition>,
    prev: Definition | undefined,
    t: Token,
    labels: Token[],
    brace: Token,
    path: PathSegment[],
  ): void {
    const name = t.text;
    if (prev?.kind === 'block')
      this.fail(`block "${name}" at line ${t.line} has labels but the one at line ${prev.line} has none`, t);
    if (prev?.kind === 'labeled' && prev.labels !== labels.length) {
      this.fail(
        `block "${name}" at line ${t.line} has ${labels.length} label(s) but the one at line ${prev.line} has ${prev.labels}`,
        t,
      );
    }
    if (prev === undefined) {
      defs.set(name, { kind: 'labeled', line: t.line, labels: labels.length });
      this.record([...path, name], t.line);
      setOwn(obj, name, {});
    }
    let target = obj[name] as HclObject;
    const blockPath: PathSegment[] = [...path, name];
    for (const [i, label] of labels.entries()) {
      const key = String(label.value);
      blockPath.push(key);
      const last = i === labels.length - 1;
      const existing = Object.hasOwn(target, key) ? target[key] : undefined;
      if (last && existing !== undefined) {
        const first = this.lines.get(formatPath(blockPath));
        const where = labels.map((l) => JSON.stringify(String(l.value))).join(' ');
        this.fail(`duplicate block ${name} ${where} at line ${t.line}: already defined at line ${first ?? '?'}`, t);
      }
      if (last) {
        this.record(blockPath, t.line);
        setOwn(target, key, this.parseBody(brace, blockPath));
      } else {
        if (existing === undefined) {
          this.record(blockPath, t.line);
          setOwn(target, key, {});
        }
        target = target[key] as HclObject;
      }
    }
  }

  private parseValue(path: PathSegment[]): HclValue {
    const t = this.next();
    switch (t.type) {
      case 'string':
        if (this.mode === 'json' && t.text !== '"') this.fail('heredocs are not allowed in JSON', t);
        return t.value as string;
      case 'number':
        return t.value as number;
      case '[':
        return this.parseList(path);
      case '{':
        return this.parseObject(t, path);
      case 'ident':
        if (t.text === 'true') return true;
        if (t.text === 'false') return false;
        if (t.text === 'null') return null;
        if (this.mode === 'hcl' && this.peek().type === '(') return this.parseCall(t, path);
        return this.fail(`unexpected identifier "${t.text}" (strings must be quoted)`, t);
      default:
        return this.fail(`expected a value but found ${describe(t)}`, t);
    }
  }

  private parseList(path: PathSegment[]): HclValue[] {
    const items: HclValue[] = [];
    for (;;) {
      const t = this.peek();
      if (t.type === ']') {
        if (this.mode === 'json' && items.length > 0) this.fail('trailing commas are not allowed in JSON', t);
        this.next();
        return items;
      }
      this.record([...path, items.length], t.line);
      items.push(this.parseValue([...path, items.length]));
      const sep = this.next();
      if (sep.type === ']') return items;
      if (sep.type !== ',') this.fail(`expected ',' or ']' in list but found ${describe(sep)}`, sep);
    }
  }

  private parseObject(open: Token, path: PathSegment[]): HclObject {
    const obj: HclObject = {};
    const seen = new Map<string, number>();
    let afterComma = false;
    for (;;) {
      const k = this.next();
      if (k.type === '}') {
        if (this.mode === 'json' && afterComma) this.fail('trailing commas are not allowed in JSON', k);
        return obj;
      }
      if (k.type === 'eof')
        this.fail(`unexpected end of file: missing '}' for the object opened at line ${open.line}`, k);
      if (k.type !== 'string' && !(k.type === 'ident' && this.mode === 'hcl'))
        this.fail(`expected an object key but found ${describe(k)}`, k);
      const key = String(k.value);
      const sep = this.next();
      const okSep = this.mode === 'json' ? sep.type === ':' : sep.type === '=' || sep.type === ':';
      if (!okSep)
        this.fail(
          `expected ${this.mode === 'json' ? "':'" : "'='"} after key "${key}" but found ${describe(sep)}`,
          sep,
        );
      const first = seen.get(key);
      if (first !== undefined)
        this.fail(`duplicate key "${key}" at line ${k.line}: already defined at line ${first}`, k);
      seen.set(key, k.line);
      this.record([...path, key], k.line);
      setOwn(obj, key, this.parseValue([...path, key]));
      const after = this.peek();
      afterComma = after.type === ',';
      if (afterComma) this.next();
      else if (after.type !== '}' && this.mode === 'json')
        this.fail(`expected ',' or '}' in object but found ${describe(after)}`, after);
      else if (after.type === 'eof')
        this.fail(`unexpected end of file: missing '}' for the object opened at line ${open.line}`, after);
    }
  }

  private parseCall(fn: Token, path: PathSegment[]): HclValue {
    this.next();
    const args: HclValue[] = [];
    while (this.peek().type !== ')') {
      if (this.peek().type === 'eof') this.fail(`unexpected end of file in call to ${fn.text}()`, this.peek());
      args.push(this.parseValue(path));
      if (this.peek().type === ',') this.next();
      else if (this.peek().type !== ')')
        this.fail(`expected ',' or ')' in call to ${fn.text}() but found ${describe(this.peek())}`, this.peek());
    }
    this.next();
    if (fn.text !== 'env')
      this.fail(`unknown function ${fn.text}(); only env("NAME") and env("NAME", "default") are supported`, fn);
    if (args.length < 1 || args.length > 2 || args.some((a) => typeof a !== 'string')) {
      this.fail('env() takes a variable name and an optional default, both strings', fn);
    }
    const name = args[0] as string;
    const value = this.env[name];
    if (value !== undefined) return value;
    if (args.length === 2) return args[1] as string;
    return this.fail(`env("${name}"): environment variable ${name} is not set and no default was given`, fn);
  }
}

function describe(t: Token): string {
  if (t.type === 'eof') return 'end of file';
  if (t.type === 'string') return t.text === '<<' ? 'a heredoc' : `string ${JSON.stringify(t.value)}`;
  if (t.type === 'number') return `number ${t.text}`;
  if (t.type === 'ident') return `"${t.text}"`;
  return `'${t.text}'`;
}

function rekey(lines: Map<string, number>, from: string, to: string): void {
  for (const [key, line] of [...lines]) {
    if (key === from || key.startsWith(`${from}.`) || key.startsWith(`${from}[`)) {
      lines.delete(key);
      lines.set(to + key.slice(from.length), line);
    }
  }
}

/** Parses HCL source into a plain object tree and a map from key path to line; throws HclParseError. */
export function parseHcl(source: string, options: HclParseOptions = {}): HclParseResult {
  const tokens = tokenize(source, 'hcl');
  const parser = new Parser(tokens, 'hcl', options.env ?? {});
  const value = parser.parseDocument();
  return { value, lines: parser.lines };
}

/** Parses strict JSON (duplicate keys rejected) into a value and a map from key path to line; throws HclParseError. */
export function parseJsonWithLines(source: string): { value: HclValue; lines: Map<string, number> } {
  const tokens = tokenize(source, 'json');
  const parser = new Parser(tokens, 'json', {});
  const value = parser.parseJsonDocument();
  return { value, lines: parser.lines };
}

// Tokenizer for the HCL subset (and strict JSON) read by the config loader.
import { HclParseError } from './hcl-parse-error.js';

/** Kinds of token the lexer produces. */
export type TokenType = 'ident' | 'string' | 'number' | '{' | '}' | '[' | ']' | '(' | ')' | ',' | '=' | ':' | 'eof';

/** One token with its 1-based position. */
export interface Token {
  type: TokenType;
  text: string;
  value: string | number;
  line: number;
  column: number;
}

/** `hcl` for ACL/HCL files; `json` for strict JSON (no comments, heredocs or HCL escapes). */
export type LexMode = 'hcl' | 'json';

const HCL_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '"': '"', '\\': '\\' };
const JSON_ESCAPES: Record<string, string> = { ...HCL_ESCAPES, '/': '/', b: '\b', f: '\f' };
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const IDENT = /[A-Za-z_][A-Za-z0-9_-]*/y;
const PUNCT = new Set(['{', '}', '[', ']', '(', ')', ',', '=', ':']);

/** Splits source text into tokens; newlines are insignificant in this subset except inside heredocs. */
class Lexer {
  private pos = 0;
  private line = 1;
  private col = 1;
  readonly tokens: Token[] = [];

  constructor(
    private readonly src: string,
    private readonly mode: LexMode,
  ) {}

  run(): Token[] {
    for (;;) {
      this.skipTrivia();
      const line = this.line;
      const column = this.col;
      if (this.pos >= this.src.length) {
        this.tokens.push({ type: 'eof', text: '', value: '', line, column });
        return this.tokens;
      }
      const ch = this.src[this.pos] ?? '';
      if (ch === '"') this.tokens.push({ type: 'string', text: '"', value: this.readString(), line, column });
      else if (ch === '<' && this.src.startsWith('<<', this.pos) && this.mode === 'hcl') {
        this.tokens.push({ type: 'string', text: '<<', value: this.readHeredoc(), line, column });
      } else if (ch === '-' || (ch >= '0' && ch <= '9')) this.tokens.push(this.readNumber(line, column));
      else if (PUNCT.has(ch)) {
        this.advance(1);
        this.tokens.push({ type: ch as TokenType, text: ch, value: ch, line, column });
      } else {
        IDENT.lastIndex = this.pos;
        const m = IDENT.exec(this.src);
        if (m === null) throw new HclParseError(`unexpected character ${JSON.stringify(ch)}`, line, column);
        this.advance(m[0].length);
        this.tokens.push({ type: 'ident', text: m[0], value: m[0], line, column });
      }
    }
  }

  private advance(n: number): void {
    for (let i = 0; i < n; i++) {
      if (this.src[this.pos] === '\n') {
        this.line++;
        this.col = 1;
      } else this.col++;
      this.pos++;
    }
  }

  private skipTrivia(): void {
    while (this.pos < this.src.length) {
      const ch = this.src[this.pos];
      if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === '\uFEFF') {
        this.advance(1);
        continue;
      }
      const isComment = ch === '#' || this.src.startsWith('//', this.pos) || this.src.startsWith('/*', this.pos);
      if (!isComment) return;
      if (this.mode === 'json') throw new HclParseError('comments are not allowed in JSON', this.line, this.col);
      if (this.src.startsWith('/*', this.pos)) {
        const end = this.src.indexOf('*/', this.pos + 2);
        if (end < 0) throw new HclParseError('unterminated /* comment', this.line, this.col);
        this.advance(end + 2 - this.pos);
      } else {
        const end = this.src.indexOf('\n', this.pos);
        this.advance((end < 0 ? this.src.length : end) - this.pos);
      }
    }
  }

  private readNumber(line: number, column: number): Token {
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(this.src);
    if (m === null) throw new HclParseError(`unexpected character ${JSON.stringify(this.src[this.pos])}`, line, column);
    this.advance(m[0].length);
    const next = this.src[this.pos];
    if (next !== undefined && /[A-Za-z0-9_.]/.test(next)) {
      throw new HclParseError(`invalid number ${JSON.stringify(m[0] + next)}`, line, column);
    }
    return { type: 'number', text: m[0], value: Number(m[0]), line, column };
  }

  private readString(): string {
    const startLine = this.line;
    const startCol = this.col;
    const escapes = this.mode === 'json' ? JSON_ESCAPES : HCL_ESCAPES;
    this.advance(1);
    let out = '';
    for (;;) {
      const ch = this.src[this.pos];
      if (ch === undefined || ch === '\n') throw new HclParseError('unterminated string', startLine, startCol);
      if (ch === '"') {
        this.advance(1);
        return out;
      }
      if (ch === '\\') {
        const e = this.src[this.pos + 1] ?? '';
        if (e === 'u' || (e === 'U' && this.mode === 'hcl')) {
          const len = e === 'u' ? 4 : 8;
          const hex = this.src.slice(this.pos + 2, this.pos + 2 + len);
          if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) {
            throw new HclParseError(`invalid \\${e} escape: expected ${len} hex digits`, this.line, this.col);
          }
          const code = parseInt(hex, 16);
          if (code > 0x10ffff)
            throw new HclParseError(`invalid \\U escape: code point out of range`, this.line, this.col);
          out += String.fromCodePoint(code);
          this.advance(2 + len);
          continue;
        }
        const mapped = escapes[e];
        if (mapped === undefined) throw new HclParseError(`invalid escape sequence \\${e}`, this.line, this.col);
        out += mapped;
        this.advance(2);
        continue;
      }
      if (this.mode === 'json' && ch < ' ') {
        throw new HclParseError('control characters must be escaped in JSON strings', this.line, this.col);
      }
      if (this.mode === 'hcl' && ch === '$' && this.src[this.pos + 1] === '{') {
        throw new HclParseError(
          'string templates (${...}) are not supported; use env("NAME") or write $${ for a literal',
          this.line,
          this.col,
        );
      }
      if (this.mode === 'hcl' && ch === '$' && this.src.startsWith('$${', this.pos)) {
        out += '${';
        this.advance(3);
        continue;
      }
      out += ch;
      this.advance(1);
    }
  }

  private readHeredoc(): string {
    const startLine = this.line;
    const startCol = this.col;
    const header = /<<(-?)([A-Za-z_][A-Za-z0-9_]*)[ \t]*\r?\n/y;
    header.lastIndex = this.pos;
    const m = header.exec(this.src);
    if (m === null)
      throw new HclParseError('invalid heredoc: expected <<NAME or <<-NAME followed by a newline', startLine, startCol);
    const indent = m[1] === '-';
    const marker = m[2] ?? '';
    this.advance(m[0].length);
    const body: string[] = [];
    for (;;) {
      if (this.pos >= this.src.length)
        throw new HclParseError(`unterminated heredoc: missing closing ${marker}`, startLine, startCol);
      const nl = this.src.indexOf('\n', this.pos);
      const raw = this.src.slice(this.pos, nl < 0 ? this.src.length : nl);
      const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (text.trim() === marker) {
        // Consume only the marker so a following `}` or `,` on the same line is still lexed.
        this.advance(raw.indexOf(marker) + marker.length);
        break;
      }
      body.push(text);
      this.advance(raw.length + (nl < 0 ? 0 : 1));
    }
    let lines = body;
    if (indent) {
      const widths = body.filter((l) => l.trim() !== '').map((l) => /^[ \t]*/.exec(l)?.[0].length ?? 0);
      const strip = widths.length === 0 ? 0 : Math.min(...widths);
      lines = body.map((l) => l.slice(Math.min(strip, /^[ \t]*/.exec(l)?.[0].length ?? 0)));
    }
    const pieces = lines
      .map((l) => `${l}\n`)
      .join('')
      .split('$${');
    if (pieces.some((p) => p.includes('${'))) {
      throw new HclParseError(
        'string templates (${...}) are not supported in heredocs; write $${ for a literal',
        startLine,
        startCol,
      );
    }
    return pieces.join('${');
  }
}

/** Splits source text into tokens ending with an `eof` token; throws HclParseError on bad input. */
export function tokenize(source: string, mode: LexMode): Token[] {
  return new Lexer(source, mode).run();
}

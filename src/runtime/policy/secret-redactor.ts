const MASK = '[REDACTED]';

/**
 * A private key block: BEGIN to the next END, or, when no END follows (output cut short), BEGIN and the
 * whole base64 lines right after it.
 */
const PRIVATE_KEY =
  /-----BEGIN [A-Z ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----|(?:\r?\n[A-Za-z0-9+/=]+(?=\r?\n|$))*)/g;

/** Secret formats and how each is masked (a kept prefix stays readable, e.g. "Bearer [REDACTED]"). */
const PATTERNS: readonly (readonly [RegExp, string])[] = [
  [PRIVATE_KEY, MASK],
  [/\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}/g, MASK],
  [/\bAKIA[0-9A-Z]{16}\b/g, MASK],
  [/\bgh[pousr]_[A-Za-z0-9]{30,}\b/g, MASK],
  [/\bgithub_pat_[A-Za-z0-9_]{40,}\b/g, MASK],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g, MASK],
  [/\bAIza[0-9A-Za-z_-]{35}\b/g, MASK],
  [/\b(Bearer\s+)[A-Za-z0-9._~+/=-]{16,}/gi, `$1${MASK}`],
  [/\b((?:api[_-]?key|secret|password|passwd|token|access[_-]?key)["']?\s*[:=]\s*["']?)[^\s"',;]{8,}/gi, `$1${MASK}`],
];

// The only patterns whose match can cross a line end: a private key block, and the whitespace after
// "Bearer" or around the ":"/"=" of a key assignment. Live output holds lines back while one may be open.
const KEY_BEGIN = /-----BEGIN [A-Z ]*PRIVATE KEY-----/g;
const KEY_END = /-----END [A-Z ]*PRIVATE KEY-----/g;
const OPEN_ASSIGNMENT =
  /(?:\bBearer|\b(?:api[_-]?key|secret|password|passwd|token|access[_-]?key)["']?)\s*(?:[:=]\s*["']?)?$/i;

/**
 * How much live output may be held back: a line longer than this, or a possible secret (an unclosed
 * private key block) spanning more, stops the live stream. Producers may cut lines longer than this
 * into pieces (bash cuts at 64 KiB), and a secret could straddle a cut.
 */
export const LIVE_HOLD_CHARS = 16 * 1024;

/** Redacts secrets from tool output: well-known key formats, bearer tokens, private keys and configured secret values. */
export class SecretRedactor {
  private readonly literals: string[];

  constructor(knownSecrets: readonly string[] = []) {
    // Longest first, so a secret containing another is redacted whole.
    this.literals = [...new Set(knownSecrets.filter((s) => s.length >= 8))].sort((a, b) => b.length - a.length);
  }

  /** The text with every secret replaced by [REDACTED]; `count` says how many were found. */
  redact(text: string): { text: string; count: number } {
    let count = 0;
    let out = text;
    for (const literal of this.literals) {
      const parts = out.split(literal);
      count += parts.length - 1;
      out = parts.join(MASK);
    }
    for (const [pattern, replacement] of PATTERNS) {
      out = out.replace(pattern, (...match: unknown[]) => {
        count += 1;
        return replacement.replace('$1', typeof match[1] === 'string' ? match[1] : '');
      });
    }
    return { text: out, count };
  }

  /** A redactor for one call's streamed output (see LiveOutputRedactor). */
  live(): LiveOutputRedactor {
    return new LiveOutputRedactor(this);
  }
}

/** Where the line that holds `index` starts. */
function lineStart(text: string, index: number): number {
  return text.lastIndexOf('\n', index - 1) + 1;
}

/** The start of the first line longer than LIVE_HOLD_CHARS (the last one may be unterminated), or -1. */
function longLineStart(text: string): number {
  for (let start = 0; start < text.length;) {
    const newline = text.indexOf('\n', start);
    const end = newline < 0 ? text.length : newline;
    if (end - start > LIVE_HOLD_CHARS) return start;
    if (newline < 0) break;
    start = newline + 1;
  }
  return -1;
}

/** The start of the line holding the first private key BEGIN after the last END (an open block), or -1. */
function openKeyLine(text: string): number {
  let afterEnd = 0;
  for (const m of text.matchAll(KEY_END)) afterEnd = m.index + m[0].length;
  KEY_BEGIN.lastIndex = afterEnd;
  const begin = KEY_BEGIN.exec(text);
  KEY_BEGIN.lastIndex = 0;
  return begin ? lineStart(text, begin.index) : -1;
}

/**
 * Redacts one tool call's streamed output with the same SecretRedactor as the final result. Output is
 * released in whole lines, so a secret cannot straddle two deltas; lines that may still be part of a
 * multi-line secret (an open private key block, "Bearer" or "token:" at a line end) are held until it
 * is decided. Past LIVE_HOLD_CHARS (a very long line, which a producer may have cut, or a long open
 * block) the live stream stops with a notice: the full, redacted output comes with the result.
 */
export class LiveOutputRedactor {
  private held = '';
  private stopped = false;

  constructor(private readonly redactor: SecretRedactor) {}

  /** Take a chunk of output; returns the redacted lines that may be shown now (each ends in "\n"). */
  push(chunk: string): string[] {
    if (this.stopped) return [];
    let text = this.held + chunk;
    // A line this long may be one piece of a longer line its producer cut: nothing from it on is shown.
    const long = longLineStart(text);
    if (long >= 0) text = text.slice(0, long);
    const complete = text.slice(0, text.lastIndexOf('\n') + 1);
    let release = complete.length;
    const open = openKeyLine(complete);
    if (open >= 0) release = open;
    const assignment = OPEN_ASSIGNMENT.exec(complete);
    if (assignment) release = Math.min(release, lineStart(complete, assignment.index));
    const lines = this.redacted(text.slice(0, release));
    this.held = text.slice(release);
    if (long >= 0 || this.held.length > LIVE_HOLD_CHARS) {
      this.stopped = true;
      this.held = '';
      lines.push(
        `[live output stopped: a line or a possible secret longer than ${LIVE_HOLD_CHARS} characters; the full, redacted output comes with the result]\n`,
      );
    }
    return lines;
  }

  /** The call ended normally: the redacted rest of the held output. */
  flush(): string[] {
    if (this.stopped) return [];
    const rest = this.held;
    this.held = '';
    return this.redacted(rest);
  }

  private redacted(text: string): string[] {
    if (text.length === 0) return [];
    return this.redactor.redact(text).text.split(/(?<=\n)/);
  }
}

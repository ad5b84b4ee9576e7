const MASK = '[REDACTED]';

/** Secret formats and how each is masked (a kept prefix stays readable, e.g. "Bearer [REDACTED]"). */
const PATTERNS: readonly (readonly [RegExp, string])[] = [
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g, MASK],
  [/\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}/g, MASK],
  [/\bAKIA[0-9A-Z]{16}\b/g, MASK],
  [/\bgh[pousr]_[A-Za-z0-9]{30,}\b/g, MASK],
  [/\bgithub_pat_[A-Za-z0-9_]{40,}\b/g, MASK],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g, MASK],
  [/\bAIza[0-9A-Za-z_-]{35}\b/g, MASK],
  [/\b(Bearer\s+)[A-Za-z0-9._~+/=-]{16,}/gi, `$1${MASK}`],
  [/\b((?:api[_-]?key|secret|password|passwd|token|access[_-]?key)["']?\s*[:=]\s*["']?)[^\s"',;]{8,}/gi, `$1${MASK}`],
];

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
}

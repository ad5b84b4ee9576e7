import { describe, expect, it } from 'vitest';
import { LIVE_HOLD_CHARS, SecretRedactor } from '../../src/runtime/policy/secret-redactor.js';

const SECRET = 'configured-provider-key-123';
const redactor = new SecretRedactor([SECRET]);

/** Feed chunks through a fresh live redactor; returns every delta it released, flush included. */
function stream(chunks: readonly string[], flush = true): string[] {
  const live = redactor.live();
  const out = chunks.flatMap((chunk) => live.push(chunk));
  return flush ? [...out, ...live.flush()] : out;
}

describe('LiveOutputRedactor', () => {
  it('redacts each line like the result and keeps one delta per line', () => {
    expect(stream([`key ${SECRET}\n`, 'plain\n', 'token=abcdefgh12345678\n'])).toEqual([
      'key [REDACTED]\n',
      'plain\n',
      'token=[REDACTED]\n',
    ]);
  });

  it('buffers to line ends, so a secret split across chunks is redacted whole', () => {
    const live = redactor.live();
    expect(live.push('a configured-prov')).toEqual([]);
    expect(live.push('ider-key-123 b\nnext')).toEqual(['a [REDACTED] b\n']);
    expect(live.flush()).toEqual(['next']);
  });

  it('holds a private key block until its END line, then shows it redacted', () => {
    const live = redactor.live();
    expect(live.push('before\n')).toEqual(['before\n']);
    expect(live.push('-----BEGIN RSA PRIVATE KEY-----\n')).toEqual([]);
    expect(live.push('MIIEowIBAAKCAQEA\n')).toEqual([]);
    expect(live.push('-----END RSA PRIVATE KEY-----\n')).toEqual(['[REDACTED]\n']);
    expect(live.push('after\n')).toEqual(['after\n']);
  });

  it('an unclosed private key block shown at the end is redacted like the result', () => {
    const out = stream(['-----BEGIN PRIVATE KEY-----\n', 'MIIEvQIBADANBgkq\n', 'AAAA==\n', 'done: ok\n']);
    expect(out.join('')).toBe('[REDACTED]\ndone: ok\n');
  });

  it('holds "Bearer" and "password:" at a line end until the next line decides', () => {
    const live = redactor.live();
    expect(live.push('Authorization: Bearer\n')).toEqual([]);
    expect(live.push('abcdefghijklmnop1234\n')).toEqual(['Authorization: Bearer\n', '[REDACTED]\n']);
    expect(live.push('password:\n')).toEqual([]);
    expect(live.push('short\n')).toEqual(['password:\n', 'short\n']);
  });

  it('stops before a line longer than the hold bound, so a secret cut between two pieces never shows', () => {
    // bash cuts a line longer than 64 KiB into pieces; here the cut falls inside the secret.
    const first = `${'x'.repeat(65_530)}${SECRET.slice(0, 10)}\n`;
    const second = `${SECRET.slice(10)} tail\n`;
    const out = stream(['head\n', first, second, 'later\n']);
    expect(out[0]).toBe('head\n');
    expect(out).toHaveLength(2);
    expect(out[1]).toContain('live output stopped');
    expect(out.join('')).not.toContain(SECRET.slice(0, 10));
    expect(out.join('')).not.toContain(SECRET.slice(10));
  });

  it('stops when an open private key block grows past the hold bound, showing none of it', () => {
    const body = Array.from({ length: Math.ceil(LIVE_HOLD_CHARS / 64) + 2 }, () => `${'A'.repeat(64)}\n`);
    const out = stream(['ok\n', '-----BEGIN PRIVATE KEY-----\n', ...body, '-----END PRIVATE KEY-----\n', 'after\n']);
    expect(out[0]).toBe('ok\n');
    expect(out).toHaveLength(2);
    expect(out[1]).toContain('live output stopped');
  });

  it('whatever the chunking, the deltas joined equal the redacted whole output', () => {
    const text = [
      'line one',
      `export KEY=${SECRET}`,
      'Authorization: Bearer',
      '   abcdefghijklmnopqrstu',
      '-----BEGIN EC PRIVATE KEY-----',
      'MHcCAQEEIB',
      '-----END EC PRIVATE KEY-----',
      'sk-proj-abcdefghijklmnopqrstuvwxyz0123',
      'api_key =',
      '  "0123456789abcdef"',
      'done',
    ].join('\n');
    const expected = redactor.redact(text).text;
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      const chunks: string[] = [];
      for (let at = 0; at < text.length;) {
        const size = 1 + random(40);
        chunks.push(text.slice(at, at + size));
        at += size;
      }
      const out = stream(chunks);
      expect(out.join('')).toBe(expected);
      expect(out.join('')).not.toContain(SECRET);
    }
  });
});

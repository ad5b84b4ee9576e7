import { describe, expect, it } from 'vitest';
import { SecretRedactor } from '../../src/runtime/policy/secret-redactor.js';

describe('SecretRedactor', () => {
  const redactor = new SecretRedactor(['configured-provider-key-123', 'tok']);
  it.each([
    ['OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz012345', 'OPENAI_API_KEY=[REDACTED]'],
    ['key sk-abcdefghijklmnopqrstuvwxyz in text', 'key [REDACTED] in text'],
    ['aws AKIAABCDEFGHIJKLMNOP here', 'aws [REDACTED] here'],
    ['gh ghp_abcdefghijklmnopqrstuvwxyz0123456789 x', 'gh [REDACTED] x'],
    ['Authorization: Bearer abcdef0123456789abcdef', 'Authorization: Bearer [REDACTED]'],
    ['password: hunter2hunter2', 'password: [REDACTED]'],
    ['"api_key": "0123456789abcdef"', '"api_key": "[REDACTED]"'],
    ['-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----\nafter', '[REDACTED]\nafter'],
    [
      'before\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq\nAAAA==\nnot a key line\n',
      'before\n[REDACTED]\nnot a key line\n',
    ],
    ['the configured-provider-key-123 leaked', 'the [REDACTED] leaked'],
    ['tok is too short to be a configured secret', 'tok is too short to be a configured secret'],
    ['nothing secret here: sk-short', 'nothing secret here: sk-short'],
  ])('%s', (input, expected) => {
    expect(redactor.redact(input).text).toBe(expected);
  });

  it('counts redactions', () => {
    expect(redactor.redact('sk-abcdefghijklmnopqrstuvwxyz and sk-bcdefghijklmnopqrstuvwxyza').count).toBe(2);
    expect(redactor.redact('clean').count).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { VerificationRequestSchema } from '../../src/protocol/verification.js';
import { validationError } from '../../src/server/route.js';

/** The "path: message" lines of a failed parse, as the HTTP layer would name them. */
function issues(input: unknown): string[] {
  const result = VerificationRequestSchema.safeParse(input);
  if (result.success) throw new Error('expected a validation error');
  return result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('VerificationRequestSchema', () => {
  it("applies the seed's defaults (kind command, required false) and accepts its snake_case fields", () => {
    expect(VerificationRequestSchema.parse({ subject: 's', commands: [{ id: 'a', command: 'true' }] })).toEqual({
      subject: 's',
      commands: [{ id: 'a', kind: 'command', command: 'true', required: false, timeoutMs: 300_000, expectExit: 0 }],
    });
    const seed = {
      subject: 'docs smoke',
      commands: [{ id: 'echo', kind: 'command', description: 'echo works', command: 'printf verify', required: true }],
    };
    expect(VerificationRequestSchema.parse(seed).commands[0]).toMatchObject({
      id: 'echo',
      kind: 'command',
      description: 'echo works',
      required: true,
    });
    const snake = VerificationRequestSchema.parse({
      subject: 's',
      commands: [{ id: 'rust:test', kind: 'acceptance_command', command: 'x', timeout_ms: 5, expect_exit: 2 }],
    });
    expect(snake.commands[0]).toMatchObject({
      id: 'rust:test',
      kind: 'acceptance_command',
      timeoutMs: 5,
      expectExit: 2,
    });
  });

  it('rejects duplicate ids, naming the command that repeats one', () => {
    const input = {
      subject: 's',
      commands: [
        { id: 'test', command: 'a' },
        { id: 'lint', command: 'b' },
        { id: 'test', command: 'c' },
      ],
    };
    expect(issues(input)).toEqual(['commands.2.id: duplicate id "test" (already used by commands.0.id)']);
    const error = validationError('body', VerificationRequestSchema.safeParse(input).error as z.ZodError);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.message).toBe('body.commands.2.id: duplicate id "test" (already used by commands.0.id)');
  });

  it('names the failing field', () => {
    expect(issues({ subject: '', commands: [{ id: 'a', command: 'x' }] })).toEqual([
      'subject: subject must not be empty',
    ]);
    expect(issues({ subject: 's', commands: [] })).toEqual(['commands: commands must hold at least one command']);
    expect(issues({ subject: 's', commands: [{ id: 'has space', command: 'x' }] })).toEqual([
      'commands.0.id: id must be 1-64 characters of A-Z a-z 0-9 _ . : -',
    ]);
    expect(issues({ subject: 's', commands: [{ id: 'a', command: '' }] })).toEqual([
      'commands.0.command: command must not be empty',
    ]);
    expect(issues({ subject: 's', commands: [{ id: 'a', command: 'x', kind: '' }] })[0]).toMatch(
      /^commands\.0\.kind: /,
    );
    expect(issues({ subject: 's', commands: [{ id: 'a', command: 'x', timeoutMs: 1, timeout_ms: 1 }] })[0]).toMatch(
      /^commands\.0: .*timeout_ms/,
    );
    expect(issues({ subject: 's', commands: [{ id: 'a', command: 'x', timeoutMs: 3_600_001 }] })[0]).toMatch(
      /^commands\.0\.timeoutMs: /,
    );
    expect(issues({ subject: 's', commands: [{ id: 'a', command: 'x', timeoutMs: 1.5 }] })[0]).toMatch(
      /^commands\.0\.timeoutMs: /,
    );
    expect(issues({ subject: 's', commands: [{ id: 'a', command: 'x', expectExit: -1 }] })[0]).toMatch(
      /^commands\.0\.expectExit: /,
    );
    expect(issues({ subject: 's', commands: [{ id: 'a', command: 'x', required: 'yes' }] })[0]).toMatch(
      /^commands\.0\.required: /,
    );
    expect(issues({ subject: 's', commands: [{ id: 'a', command: 'x', label: 'extra' }] })[0]).toMatch(
      /^commands\.0: .*label/,
    );
    expect(issues({ subject: 's', commands: [{ id: 'a', command: 'x' }], extra: true })[0]).toMatch(/^: .*extra/);
    const tooMany = Array.from({ length: 51 }, (_, i) => ({ id: `c${i}`, command: 'true' }));
    expect(issues({ subject: 's', commands: tooMany })[0]).toMatch(/^commands: /);
    expect(issues({ subject: 'x'.repeat(501), commands: [{ id: 'a', command: 'x' }] })[0]).toMatch(/^subject: /);
  });
});

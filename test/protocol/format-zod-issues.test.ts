import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  dottedFieldPath,
  formatZodIssues,
  zodFieldIssues,
  zodFieldProblems,
} from '../../src/protocol/format-zod-issues.js';

const Schema = z
  .object({
    name: z.string(),
    items: z.array(z.object({ id: z.number() }).strict()),
    mode: z.enum(['a', 'b']).optional(),
  })
  .strict();

function errorOf(value: unknown): z.ZodError {
  const result = Schema.safeParse(value);
  if (result.success) throw new Error('expected a failure');
  return result.error;
}

describe('the one zod-issue formatter', () => {
  it('names the field dotted from `where`, with a missing field worded as required', () => {
    expect(formatZodIssues(errorOf({ items: [] }), { where: 'body' })).toBe('body.name: required (expected string)');
    expect(formatZodIssues(errorOf({ name: 'n', items: [{ id: 'x' }] }), { where: 'body' })).toBe(
      'body.items.0.id: Invalid input: expected number, received string',
    );
    expect(formatZodIssues(errorOf({ name: 'n', items: [{ id: 'x' }] }))).toBe(
      'items.0.id: Invalid input: expected number, received string',
    );
  });

  it('names each unknown key as its own field, and keeps a message the schema words itself', () => {
    expect(zodFieldIssues(errorOf({ name: 'n', items: [], colour: 1, size: 2 }), 'body')).toEqual([
      { path: 'body.colour', message: 'unknown key' },
      { path: 'body.size', message: 'unknown key' },
    ]);
    const Worded = z.strictObject(
      { a: z.string().optional() },
      {
        error: (issue) => (issue.code === 'unrecognized_keys' ? `no such option ${issue.keys.join(', ')}` : undefined),
      },
    );
    const result = Worded.safeParse({ b: 1 });
    expect(result.success).toBe(false);
    expect(formatZodIssues(result.error!, { where: 'body' })).toBe('body: no such option b');
  });

  it('names the first `max` fields and counts the rest', () => {
    const error = errorOf({ mode: 'c', items: 'no' });
    expect(zodFieldProblems(error).map((p) => p.segments.join('.'))).toEqual(['name', 'items', 'mode']);
    expect(formatZodIssues(error)).toBe('name: required (expected string) (and 2 more)');
    expect(formatZodIssues(error, { max: 2 })).toMatch(
      /^name: required \(expected string\); items: .+ \(and 1 more\)$/,
    );
    expect(formatZodIssues(error, { max: 5 }).split('; ')).toHaveLength(3);
    expect(zodFieldIssues(error, undefined, 1)).toHaveLength(1);
  });

  it('names the root by `where`, else (root)', () => {
    const result = z.string().safeParse(1);
    expect(result.success).toBe(false);
    expect(formatZodIssues(result.error!)).toBe('(root): Invalid input: expected string, received number');
    expect(formatZodIssues(result.error!, { where: 'answer' })).toBe(
      'answer: Invalid input: expected string, received number',
    );
    expect(dottedFieldPath([], '')).toBe('(root)');
    expect(dottedFieldPath(['a', 0, 'b'], 'query')).toBe('query.a.0.b');
  });
});

/** What the formatter reads of a zod issue (zod 4's, or zod 3's from a library schema). */
export interface ZodIssueLike {
  readonly code: string;
  readonly path: readonly PropertyKey[];
  readonly message: string;
  /** The unknown keys of an `unrecognized_keys` issue. */
  readonly keys?: readonly string[];
}

/** A zod error or its issues: what the formatter takes. */
export type ZodIssues = { readonly issues: readonly ZodIssueLike[] } | readonly ZodIssueLike[];

/** One failing field as zod names it: the path segments from the parsed value's root, and what is wrong. */
export interface ZodFieldProblem {
  readonly segments: readonly PropertyKey[];
  readonly message: string;
}

/** One failing field as our errors name it: the dotted path (`body.messages.0.role`) and what is wrong. */
export interface FieldIssue {
  readonly path: string;
  readonly message: string;
}

/** How a message names its failing fields. */
export interface FormatZodIssuesOptions {
  /** The first path segment: where the value came from (`body`, `query`, `message`); the root itself is then named by it. */
  readonly where?: string;
  /** How many failing fields the message names (default 1); the rest are counted: ` (and N more)`. */
  readonly max?: number;
}

// zod's own message for keys a strict object does not know (a schema's error map may say something better).
const DEFAULT_UNKNOWN_KEYS = /^Unrecognized keys?: /;
// zod's own message for a required field that is missing.
const MISSING = /^Invalid input: expected (\w+), received undefined$/;

function issuesOf(issues: ZodIssues): readonly ZodIssueLike[] {
  return 'issues' in issues ? issues.issues : issues;
}

/**
 * The failing fields of a zod error in order, worded one way: a key a strict object does not know is one
 * problem per key, `<key>: unknown key` (unless the schema words it itself); a missing required field is
 * `required (expected <type>)`; anything else keeps zod's (or the schema's) message.
 */
export function zodFieldProblems(issues: ZodIssues): ZodFieldProblem[] {
  return issuesOf(issues).flatMap((issue): ZodFieldProblem[] => {
    if (issue.code === 'unrecognized_keys' && issue.keys && DEFAULT_UNKNOWN_KEYS.test(issue.message))
      return issue.keys.map((key) => ({ segments: [...issue.path, key], message: 'unknown key' }));
    const missing = MISSING.exec(issue.message);
    return [{ segments: issue.path, message: missing ? `required (expected ${missing[1]})` : issue.message }];
  });
}

/** A field path as our messages name it: `where` and the segments, dotted (`body.messages.0.role`); the root is `where`, else `(root)`. */
export function dottedFieldPath(segments: readonly PropertyKey[], where?: string): string {
  const parts = [...(where !== undefined && where !== '' ? [where] : []), ...segments.map(String)];
  return parts.length > 0 ? parts.join('.') : '(root)';
}

/** The failing fields of a zod error with their dotted paths (see zodFieldProblems), at most `limit` of them. */
export function zodFieldIssues(issues: ZodIssues, where?: string, limit = Number.POSITIVE_INFINITY): FieldIssue[] {
  return zodFieldProblems(issues)
    .slice(0, limit)
    .map((problem) => ({ path: dottedFieldPath(problem.segments, where), message: problem.message }));
}

/**
 * The one message of a zod error: `<field>: <what is wrong>` for the first `max` failing fields, joined by
 * "; ", then ` (and N more)` when there are more (`body.input: required (expected string)`).
 */
export function formatZodIssues(issues: ZodIssues, options: FormatZodIssuesOptions = {}): string {
  const max = Math.max(1, options.max ?? 1);
  const all = zodFieldIssues(issues, options.where);
  if (all.length === 0) return `${dottedFieldPath([], options.where)}: invalid`;
  const named = all
    .slice(0, max)
    .map((issue) => `${issue.path}: ${issue.message}`)
    .join('; ');
  return all.length > max ? `${named} (and ${all.length - max} more)` : named;
}

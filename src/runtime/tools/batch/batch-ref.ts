/** What a `$ref` can see of another invocation in the same batch. */
export interface RefSource {
  /** The step the referenced invocation belongs to. */
  readonly step: number;
  /** Its result once it has finished; undefined while it has not run (yet). */
  readonly result?: RefResult;
}

/** The finished result of an invocation, as `$ref` reads it. */
export interface RefResult {
  readonly status: 'ok' | 'error' | 'skipped';
  readonly exitCode: number | null;
  readonly output: string;
  readonly truncated: boolean;
  readonly metadata?: Record<string, unknown>;
}

/** The outcome of binding `$ref`s in one invocation's arguments. */
export type BindResult = { ok: true; value: unknown } | { ok: false; error: string };

// Arguments come from JSON, so they cannot be cyclic; this only bounds recursion on absurd nesting.
const MAX_DEPTH = 200;

class RefError extends Error {}

/** True for a value of the exact shape `{"$ref": "<id>.<path>"}` (one key, a string value). */
export function isRef(value: unknown): value is { $ref: string } {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === '$ref' && typeof value.$ref === 'string';
}

/**
 * Replace every `{"$ref": "<id>.<path>"}` in `args` (deeply) with the referenced value from an
 * earlier step; the first bad reference fails the whole binding with a message naming it.
 */
export function bindRefs(args: unknown, currentStep: number, sources: ReadonlyMap<string, RefSource>): BindResult {
  const jsonCache = new Map<string, unknown>();
  const walk = (value: unknown, depth: number): unknown => {
    if (depth > MAX_DEPTH) throw new RefError(`arguments are nested deeper than ${MAX_DEPTH} levels`);
    if (isRef(value)) return resolveRef(value.$ref, currentStep, sources, jsonCache);
    if (Array.isArray(value)) return value.map((entry) => walk(entry, depth + 1));
    // fromEntries defines own properties, so a "__proto__" key stays data and never becomes a prototype.
    if (isPlainObject(value))
      return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, walk(entry, depth + 1)]));
    return value;
  };
  try {
    return { ok: true, value: walk(args, 0) };
  } catch (error) {
    if (error instanceof RefError) return { ok: false, error: error.message };
    throw error;
  }
}

function resolveRef(
  ref: string,
  currentStep: number,
  sources: ReadonlyMap<string, RefSource>,
  jsonCache: Map<string, unknown>,
): unknown {
  const fail = (detail: string): never => {
    throw new RefError(`$ref ${JSON.stringify(ref)}: ${detail}`);
  };
  const [id, field, ...rest] = ref.split('.');
  if (field === undefined) return fail(`expected "<id>.<field>", e.g. "${id || 'a'}.output"`);
  if (field === '' || rest.some((segment) => segment === ''))
    return fail('the path has an empty segment (two dots in a row, or a trailing dot)');

  const source = sources.get(id);
  if (!source) return fail(`no invocation has the id "${id}"`);
  if (source.step >= currentStep) {
    return fail(
      `"${id}" is in step ${source.step}, which does not finish before this step (${currentStep}); only results of earlier steps can be referenced`,
    );
  }
  const result = source.result;
  if (!result) return fail(`"${id}" has no result`);
  if (result.status === 'skipped') return fail(`"${id}" was skipped, so it has no result`);
  if (result.status !== 'ok')
    return fail(`"${id}" failed (exit code ${result.exitCode ?? 'none'}), so its result cannot be used`);

  switch (field) {
    case 'output':
      if (rest.length > 0)
        return fail(`output is a string and has no fields; use "${id}.json.${rest.join('.')}" to read JSON output`);
      return result.output;
    case 'output_lines':
      return walkPath(outputLines(result.output), rest, 'output_lines', fail);
    case 'exitCode':
    case 'exit_code':
      if (rest.length > 0) return fail(`${field} is a number and has no fields`);
      return result.exitCode;
    case 'metadata':
      if (!result.metadata) return fail(`"${id}" returned no metadata`);
      return walkPath(result.metadata, rest, 'metadata', fail);
    case 'json': {
      if (!jsonCache.has(id)) jsonCache.set(id, parseOutput(result, id, fail));
      return walkPath(jsonCache.get(id), rest, 'json', fail);
    }
    default:
      return fail(`unknown field "${field}"; use output, output_lines.<n>, exit_code, metadata.<key> or json.<path>`);
  }
}

/** The output's lines without their line breaks (a final newline does not start another line). */
function outputLines(output: string): string[] {
  if (output === '') return [];
  const lines = output.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function parseOutput(result: RefResult, id: string, fail: (detail: string) => never): unknown {
  try {
    return JSON.parse(result.output);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    const hint = result.truncated ? ' (the output was truncated)' : '';
    return fail(`the output of "${id}" is not valid JSON${hint}: ${detail}`);
  }
}

function walkPath(
  root: unknown,
  segments: readonly string[],
  rootName: string,
  fail: (detail: string) => never,
): unknown {
  let current = root;
  let at = rootName;
  for (const segment of segments) {
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(segment)) return fail(`${at} is an array; index it with a number, not "${segment}"`);
      const index = Number(segment);
      if (index >= current.length) return fail(`index ${index} is out of range at ${at} (array of ${current.length})`);
      current = current[index];
    } else if (isPlainObject(current)) {
      // Own keys only: a path must never reach into prototypes ("constructor", "__proto__").
      if (!Object.hasOwn(current, segment)) return fail(`no key "${segment}" at ${at}`);
      current = current[segment];
    } else {
      return fail(`cannot read "${segment}" of ${describeValue(current)} at ${at}`);
    }
    at = `${at}.${segment}`;
  }
  if (current === undefined) return fail(`${at} has no value`);
  return current;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'boolean') return 'a boolean';
  return typeof value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

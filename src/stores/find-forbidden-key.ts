// Own keys that could rewrite a prototype when a later merge or zod record copies them.
const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** A prototype-polluting key found in untrusted data, with the field path that names it. */
export interface ForbiddenKeyHit {
  /** The key itself: "__proto__", "constructor" or "prototype". */
  key: string;
  /** Where it sits, formatted like `trace_events[0].payload.__proto__`. */
  path: string;
}

/**
 * The first own `__proto__`, `constructor` or `prototype` key anywhere in an untrusted value (parsed
 * JSON or an in-memory value), or undefined; stored documents are checked with it before zod sees them.
 */
export function findForbiddenKey(raw: unknown): ForbiddenKeyHit | undefined {
  // Iterative walk so a deeply nested document cannot overflow the stack; `seen` tolerates cycles in
  // in-memory values (JSON never has them).
  const stack: Array<{ value: unknown; path: PropertyKey[] }> = [{ value: raw, path: [] }];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const { value, path } = stack.pop() as { value: unknown; path: PropertyKey[] };
    if (typeof value !== 'object' || value === null || seen.has(value)) continue;
    seen.add(value);
    const isArray = Array.isArray(value);
    for (const key of Reflect.ownKeys(value)) {
      if (typeof key !== 'string') continue;
      if (isArray && key === 'length') continue;
      const childPath = [...path, isArray ? Number(key) : key];
      if (!isArray && FORBIDDEN_KEYS.has(key)) return { key, path: formatFieldPath(childPath) };
      const descriptor = Object.getOwnPropertyDescriptor(value, key);
      // Accessors are never produced by JSON; reading them could run code, so only plain data is walked.
      if (descriptor !== undefined && 'value' in descriptor) stack.push({ value: descriptor.value, path: childPath });
    }
  }
  return undefined;
}

/** A field path as error messages name it: `a.b[0].c`, or `(root)` for the empty path. */
export function formatFieldPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out;
}

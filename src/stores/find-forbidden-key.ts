// Own keys that could rewrite a prototype when a later merge or zod record copies them.
const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

// Objects walked before cycles are tracked (see findForbiddenKey).
const UNTRACKED_OBJECTS = 64;

/** A prototype-polluting key found in untrusted data, with the field path that names it. */
export interface ForbiddenKeyHit {
  /** The key itself: "__proto__", "constructor" or "prototype". */
  key: string;
  /** Where it sits, formatted like `trace_events[0].payload.__proto__`. */
  path: string;
}

/** An object still to walk, linked to its parent so a field path is only built for a hit. */
interface Frame {
  value: object;
  parent: Frame | undefined;
  key: string | number;
}

/**
 * The first own `__proto__`, `constructor` or `prototype` key anywhere in an untrusted value (parsed
 * JSON or an in-memory value), or undefined; stored documents are checked with it before zod sees them.
 */
export function findForbiddenKey(raw: unknown): ForbiddenKeyHit | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  // Iterative walk so a deeply nested document cannot overflow the stack; `seen` tolerates cycles in
  // in-memory values (JSON never has them). Only objects are pushed: leaves need no frame.
  const stack: Frame[] = [{ value: raw, parent: undefined, key: '' }];
  let seen: Set<object> | undefined;
  let walked = 0;
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    const value = frame.value;
    // Cycles are tracked from the UNTRACKED_OBJECTS-th object on: a small document (a checkpoint) needs no
    // set, and a cyclic value walks at most its first objects twice before the set stops it.
    walked += 1;
    if (walked > UNTRACKED_OBJECTS) {
      seen ??= new Set();
      if (seen.has(value)) continue;
      seen.add(value);
    }
    const isArray = Array.isArray(value);
    for (const key of Reflect.ownKeys(value)) {
      if (typeof key !== 'string' || (isArray && key === 'length')) continue;
      if (!isArray && FORBIDDEN_KEYS.has(key)) return { key, path: formatFieldPath(pathTo(frame, key)) };
      const descriptor = Object.getOwnPropertyDescriptor(value, key);
      // Accessors are never produced by JSON; reading them could run code, so only plain data is walked.
      const child: unknown = descriptor !== undefined && 'value' in descriptor ? descriptor.value : undefined;
      if (typeof child === 'object' && child !== null)
        stack.push({ value: child, parent: frame, key: isArray ? Number(key) : key });
    }
  }
  return undefined;
}

/** The field path from the root to `key` inside `frame`'s object. */
function pathTo(frame: Frame, key: string): Array<string | number> {
  const path: Array<string | number> = [key];
  for (let at: Frame | undefined = frame; at?.parent !== undefined; at = at.parent) path.push(at.key);
  return path.reverse();
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

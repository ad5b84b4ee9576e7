import { describe, expect, it } from 'vitest';
import { findForbiddenKey, formatFieldPath } from '../../src/stores/find-forbidden-key.js';

describe('findForbiddenKey', () => {
  it('finds __proto__, constructor and prototype keys at any depth and names their path', () => {
    expect(findForbiddenKey(JSON.parse('{"a":[{"b":{}},{"c":{"__proto__":{}}}]}'))).toEqual({
      key: '__proto__',
      path: 'a[1].c.__proto__',
    });
    expect(findForbiddenKey(JSON.parse('{"constructor":1}'))).toEqual({ key: 'constructor', path: 'constructor' });
    expect(findForbiddenKey({ runs: [[{ x: { prototype: null } }]] })).toEqual({
      key: 'prototype',
      path: 'runs[0][0].x.prototype',
    });
  });

  it('passes clean documents, primitives and arrays whose items are named like forbidden keys', () => {
    expect(findForbiddenKey({ a: 1, b: ['__proto__', 'constructor'], c: { d: null, e: 'prototype' } })).toBeUndefined();
    expect(findForbiddenKey('__proto__')).toBeUndefined();
    expect(findForbiddenKey(null)).toBeUndefined();
  });

  it('tolerates cycles, skips symbol keys and never runs accessors', () => {
    const cyclic: Record<string, unknown> = { a: {} };
    cyclic.self = cyclic;
    (cyclic.a as Record<string, unknown>).back = cyclic;
    expect(findForbiddenKey(cyclic)).toBeUndefined();
    let ran = false;
    const accessor = Object.defineProperty({}, 'value', {
      enumerable: true,
      get() {
        ran = true;
        return { __proto__: null };
      },
    });
    expect(findForbiddenKey({ [Symbol('constructor')]: 1, accessor })).toBeUndefined();
    expect(ran).toBe(false);
  });

  it('ends on a large cyclic value (every node pointing at every other) and still finds a key in it', () => {
    const nodes: Array<Record<string, unknown>> = Array.from({ length: 200 }, () => ({}));
    for (const node of nodes) nodes.forEach((other, i) => (node[`n${i}`] = other));
    expect(findForbiddenKey(nodes[0])).toBeUndefined();
    Object.defineProperty(nodes[199], 'constructor', { value: 1, enumerable: true });
    expect(findForbiddenKey(nodes[0])).toMatchObject({ key: 'constructor' });
  });

  it('walks a document nested deeper than the call stack could', () => {
    let deep: unknown = { constructor: true };
    for (let i = 0; i < 100_000; i += 1) deep = { n: deep };
    expect(findForbiddenKey(deep)?.path).toBe(`${'n.'.repeat(100_000)}constructor`);
  });

  it('formats paths with dots and brackets, and the root as (root)', () => {
    expect(formatFieldPath([])).toBe('(root)');
    expect(formatFieldPath(['a', 0, 'b', 12])).toBe('a[0].b[12]');
    expect(formatFieldPath([3, 'x'])).toBe('[3].x');
  });
});

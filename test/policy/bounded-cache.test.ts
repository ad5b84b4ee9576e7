import { describe, expect, it } from 'vitest';
import { BoundedCache } from '../../src/runtime/policy/bounded-cache.js';
import {
  globMatches,
  parseRule,
  RULE_CACHE_ENTRIES,
  ruleGlobCacheSize,
} from '../../src/runtime/policy/permission-policy.js';

describe('BoundedCache', () => {
  it('drops the least recently used entry when full', () => {
    const cache = new BoundedCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1); // a is now newer than b
    cache.set('c', 3);
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
  });

  it('computes on a miss only', () => {
    const cache = new BoundedCache<string, number>(4);
    let calls = 0;
    const compute = (key: string) => {
      calls += 1;
      return key.length;
    };
    expect(cache.getOrCompute('abc', compute)).toBe(3);
    expect(cache.getOrCompute('abc', compute)).toBe(3);
    expect(calls).toBe(1);
  });

  it('refuses a bound below one', () => {
    expect(() => new BoundedCache(0)).toThrow(/at least one entry/);
  });
});

describe('the rule matcher cache', () => {
  it('stays at its bound under a flood of distinct patterns, and still matches right', () => {
    const hot = 'src/**/*.ts';
    expect(globMatches(hot, 'src/a/b.ts')).toBe(true);
    for (let i = 0; i < RULE_CACHE_ENTRIES * 3; i++) {
      expect(globMatches(`flood-${i}/*`, `flood-${i}/x`)).toBe(true);
      parseRule(`read(flood-${i}/**)`);
      expect(ruleGlobCacheSize()).toBeLessThanOrEqual(RULE_CACHE_ENTRIES);
    }
    expect(ruleGlobCacheSize()).toBe(RULE_CACHE_ENTRIES);
    // An evicted pattern is compiled again, to the same meaning.
    expect(globMatches(hot, 'src/a/b.ts')).toBe(true);
    expect(globMatches(hot, 'lib/a.ts')).toBe(false);
  });
});

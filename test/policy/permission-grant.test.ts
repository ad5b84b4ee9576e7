import { describe, expect, it } from 'vitest';
import { permissionGrantKey, permissionGrantRequest } from '../../src/runtime/policy/permission-grant.js';

describe('"allow always" grant keys', () => {
  it('bash is keyed by its parsed simple commands; a hazardous line by its exact text', () => {
    expect(permissionGrantKey('bash', { command: 'echo  a' })).toBe(permissionGrantKey('bash', { command: 'echo a' }));
    expect(permissionGrantKey('bash', { command: 'echo a' })).not.toBe(
      permissionGrantKey('bash', { command: 'echo a; rm -rf x' }),
    );
    expect(permissionGrantKey('bash', { command: 'echo $(id)' })).toBe('bash\u0000line\u0000echo $(id)');
  });

  it('other tools are keyed by their permission subject', () => {
    expect(permissionGrantKey('write', { file_path: 'a.txt', content: 'one' })).toBe(
      permissionGrantKey('Write', { file_path: 'a.txt', content: 'two' }),
    );
    expect(permissionGrantKey('write', { file_path: 'a.txt' })).not.toBe(
      permissionGrantKey('write', { file_path: 'b.txt' }),
    );
    expect(permissionGrantKey('grep', { pattern: 'x' })).not.toBe(permissionGrantKey('grep', { pattern: 'y' }));
  });

  it("the operator's floor decides whether a grant needs host_direct", () => {
    const floor = { allow: ['read'], ask: [], deny: [], defaultDecision: 'ask' as const, enabled: true };
    expect(permissionGrantRequest('read', { file_path: 'a' }, floor).floorAsks).toBe(false);
    expect(permissionGrantRequest('bash', { command: 'ls' }, floor).floorAsks).toBe(true);
    expect(permissionGrantRequest('bash', { command: 'ls' }, undefined).floorAsks).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { createReplayHostEnv } from '../../src/runtime/ports/host-env.js';
import { SessionArtifacts } from '../../src/runtime/session-kernel/session-artifacts.js';

const hostEnv = () => createReplayHostEnv({ sequentialIdPrefix: 't', fixedTimeMs: 1_000 });

describe('SessionArtifacts bounds', () => {
  it('evicts the oldest artifacts first when the count bound is reached', () => {
    const artifacts = new SessionArtifacts(hostEnv(), { maxArtifacts: 2, maxBytes: 1_000 });
    const ids = ['a', 'b', 'c', 'd'].map((content, i) => artifacts.store(content, `call_${i}`, 'bash'));
    expect(artifacts.list().map((a) => a.content)).toEqual(['c', 'd']);
    expect(artifacts.get(ids[3] ?? '')?.content).toBe('d');
    expect(artifacts.get(ids[0] ?? '')).toBeUndefined();
    expect(artifacts.evictedBy(ids[0] ?? '')).toBe('limits.maxArtifactsPerSession');
    expect(artifacts.evictedBy(ids[3] ?? '')).toBeUndefined();
    expect(artifacts.evictedBy('art_never')).toBeUndefined();
  });

  it('evicts the oldest artifacts first until the new one fits the byte bound (UTF-8 bytes)', () => {
    const artifacts = new SessionArtifacts(hostEnv(), { maxArtifacts: 100, maxBytes: 10 });
    const first = artifacts.store('1234', 'c1', 'bash');
    artifacts.store('5678', 'c2', 'bash');
    // 'é' is two bytes: 4 + 4 + 4 bytes would be 12 > 10, so only the oldest goes.
    artifacts.store('éé', 'c3', 'bash');
    expect(artifacts.list().map((a) => a.content)).toEqual(['5678', 'éé']);
    expect(artifacts.evictedBy(first ?? '')).toBe('limits.maxArtifactBytesPerSession');
    artifacts.store('abcdefghij', 'c4', 'bash');
    expect(artifacts.list().map((a) => a.content)).toEqual(['abcdefghij']);
  });

  it('refuses an artifact larger than the byte bound on its own and keeps the others', () => {
    const artifacts = new SessionArtifacts(hostEnv(), { maxArtifacts: 10, maxBytes: 8 });
    artifacts.store('keep', 'c1', 'bash');
    expect(artifacts.store('x'.repeat(9), 'c2', 'bash')).toBeUndefined();
    expect(artifacts.list().map((a) => a.content)).toEqual(['keep']);
  });

  it('trims restored artifacts (a snapshot from before the bounds) to the bounds, keeping the newest', () => {
    const restored = ['a', 'b', 'c'].map((content, i) => ({
      id: `art_${i}`,
      toolCallId: `c${i}`,
      toolName: 'bash',
      createdAtMs: i,
      content,
    }));
    const artifacts = new SessionArtifacts(hostEnv(), { maxArtifacts: 2, maxBytes: 100 }, restored);
    expect(artifacts.list().map((a) => a.id)).toEqual(['art_1', 'art_2']);
    expect(artifacts.evictedBy('art_0')).toBe('limits.maxArtifactsPerSession');
  });
});

import { mkdtempSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MemoryItem } from '../../src/protocol/memory.js';
import { AgentMemory, SHORT_TERM_MAX, WORKING_MAX } from '../../src/runtime/memory/agent-memory.js';
import { boundText, memoryContextSection, MEMORY_CONTEXT_CHARS } from '../../src/runtime/memory/memory-context.js';
import { memoryRelevance } from '../../src/runtime/memory/memory-relevance.js';
import { FileMemoryItemStore, tenantDirectoryName } from '../../src/stores/file-memory-item-store.js';
import { ProcessMemoryItemStore } from '../../src/stores/process-memory-item-store.js';
import { overflowIds } from '../../src/stores/memory-item-store.js';

const DAY = 86_400_000;

function clock(start: number) {
  let now = start;
  let n = 0;
  return {
    env: { now: () => now, newId: (p: string) => `${p}_${String(++n).padStart(4, '0')}` },
    advance: (ms: number) => (now += ms),
  };
}

describe('AgentMemory', () => {
  it('scores relevance as importance*0.7 + exp(-age_days/30)*0.3', () => {
    expect(memoryRelevance({ importance: 0.8, timestamp: 0 }, 0)).toBeCloseTo(0.86, 10);
    expect(memoryRelevance({ importance: 0.5, timestamp: 0 }, 30 * DAY)).toBeCloseTo(0.35 + Math.exp(-1) * 0.3, 10);
  });

  it('bounds the short-term ring (100) and the working tier (10) and ranks recall by relevance', async () => {
    const c = clock(1_000 * DAY);
    const events: string[] = [];
    const memory = new AgentMemory({
      store: new ProcessMemoryItemStore(),
      scope: { tenantId: 't', namespace: 'n' },
      hostEnv: c.env,
      emit: (type) => events.push(type),
    });
    const old = await memory.rememberSuccess('old thing', [], 'r');
    c.advance(60 * DAY);
    for (let i = 0; i < SHORT_TERM_MAX + 5; i += 1) await memory.rememberSuccess(`task ${i}`, ['read'], 'r');
    expect(await memory.stats()).toEqual({
      longTermCount: SHORT_TERM_MAX + 6,
      shortTermCount: SHORT_TERM_MAX,
      workingCount: WORKING_MAX,
    });
    const newer = await memory.rememberFailure('old thing again', 'boom', []);
    // Both match; the newer failure is more important and more recent.
    expect((await memory.recallSimilar('OLD THING')).map((i) => i.id)).toEqual([newer.id, old.id]);
    expect(events.filter((e) => e === 'memory_stored')).toHaveLength(SHORT_TERM_MAX + 7);
    expect(events.slice(-3)).toEqual(['memory_recalled', 'memory_recalled', 'memories_searched']);
  });

  it('bounds the context section and the recorded text', async () => {
    const c = clock(0);
    const memory = new AgentMemory({
      store: new ProcessMemoryItemStore(),
      scope: { tenantId: 't', namespace: 'n' },
      hostEnv: c.env,
      emit: () => undefined,
    });
    for (let i = 0; i < 8; i += 1) await memory.rememberSuccess('big', [], 'x'.repeat(3_000));
    const section = await memoryContextSection(memory, 'big');
    expect(section.split('\n- ').length - 1).toBeLessThanOrEqual(5);
    expect(section.length).toBeLessThan(MEMORY_CONTEXT_CHARS + 400);
    expect(await memoryContextSection(memory, '   ')).toBe('');
    expect(boundText('abcdef', 3)).toBe('abc… [3 more characters]');
  });

  it('evicts the oldest items beyond the per-scope bound', () => {
    const items = [1, 2, 3].map((n) => ({ id: `m${n}`, timestamp: n }) as MemoryItem);
    expect(overflowIds(items, 2)).toEqual(['m1']);
  });
});

describe('FileMemoryItemStore', () => {
  it('keeps one directory per tenant and namespace, and reads it back in a new instance', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'a3s-memstore-'));
    const store = new FileMemoryItemStore(dir);
    const item: MemoryItem = {
      id: 'mem_1',
      content: 'c',
      timestamp: 5,
      importance: 0.5,
      tags: [],
      memory_type: 'semantic',
      metadata: {},
      access_count: 0,
    };
    await store.put({ tenantId: 'tenant-a', namespace: 'default' }, item);
    await store.put({ tenantId: 'weird/../tenant', namespace: 'default' }, { ...item, id: 'mem_2' });
    expect((await readdir(dir)).sort()).toEqual([tenantDirectoryName('weird/../tenant'), 'tenant-a'].sort());
    expect(tenantDirectoryName('weird/../tenant').startsWith('~')).toBe(true);
    expect(await readdir(join(dir, 'tenant-a', 'default'))).toEqual(['mem_1.json']);
    const again = new FileMemoryItemStore(dir);
    expect(await again.list({ tenantId: 'tenant-a', namespace: 'default' })).toEqual([item]);
    expect(await again.list({ tenantId: 'tenant-a', namespace: 'other' })).toEqual([]);
  });
});

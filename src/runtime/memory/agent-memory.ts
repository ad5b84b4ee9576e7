import type { MemoryItem, MemoryStats, MemoryType } from '../../protocol/memory.js';
import type { RuntimeEventPayloads } from '../../protocol/runtime-event.js';
import type { MemoryItemStore, MemoryScope } from '../../stores/memory-item-store.js';
import type { HostEnv } from '../ports/host-env.js';
import type { GovernanceHooks } from '../policy/session-governance.js';
import { memoryRelevance } from './memory-relevance.js';

/** Items the short-term ring keeps (FIFO), as in the seed. */
export const SHORT_TERM_MAX = 100;
/** Items the working tier keeps (trimmed by relevance), as in the seed. */
export const WORKING_MAX = 10;

type MemoryEvent = 'memory_stored' | 'memory_recalled' | 'memories_searched' | 'memory_cleared';

/** Where AgentMemory reports memory_stored, memory_recalled, memories_searched and memory_cleared. */
export type MemoryEventSink = <T extends MemoryEvent>(type: T, payload: RuntimeEventPayloads[T]) => void;

/** The session's governance as memory sees it: its hooks once built (a session never built has none to tell). */
export interface MemoryHookSource {
  readonly current: { readonly governance: { readonly hooks?: GovernanceHooks } } | undefined;
}

/** What an AgentMemory is built from. */
export interface AgentMemoryDeps {
  store: MemoryItemStore;
  scope: MemoryScope;
  hostEnv: HostEnv;
  emit: MemoryEventSink;
  /** The session whose memory this is and its hooks: pre_memory_recall and post_memory_recall around each recall. */
  sessionId?: string;
  hooks?: MemoryHookSource;
}

/**
 * The seed's classic AgentMemory: a long-term store (shared by the sessions of one tenant and namespace),
 * plus this session's short-term ring and working set (in process, not part of snapshots).
 */
export class AgentMemory {
  private readonly shortTerm: MemoryItem[] = [];
  private working: MemoryItem[] = [];

  constructor(private readonly deps: AgentMemoryDeps) {}

  /** The scope the long-term items live in. */
  get scope(): MemoryScope {
    return this.deps.scope;
  }

  /** Remember a successful task (importance 0.8, tags success/pattern, procedural). */
  rememberSuccess(task: string, tools: readonly string[], result: string): Promise<MemoryItem> {
    return this.remember(
      `Success: ${task}\nTools: ${tools.join(', ')}\nResult: ${result}`,
      0.8,
      ['success', 'pattern'],
      'procedural',
      { prompt: task, tools: [...tools] },
    );
  }

  /** Remember a failed task (importance 0.9, tags failure/avoid, episodic). */
  rememberFailure(task: string, error: string, tools: readonly string[]): Promise<MemoryItem> {
    return this.remember(
      `Failure: ${task}\nError: ${error}\nAttempted tools: ${tools.join(', ')}`,
      0.9,
      ['failure', 'avoid'],
      'episodic',
      { prompt: task, error },
    );
  }

  /** Items whose content contains `query` (case-insensitive), most relevant first. */
  async recallSimilar(query: string, limit = 5): Promise<MemoryItem[]> {
    const needle = query.toLowerCase();
    const hooks = this.recallHooks(query, [], limit);
    const found = await this.recall((item) => item.content.toLowerCase().includes(needle), limit);
    this.deps.emit('memories_searched', { query, tags: [], result_count: found.length });
    if (hooks) this.recalled(hooks, query, [], found.length);
    return found;
  }

  /** Items with at least one of `tags`, most relevant first. */
  async recallByTags(tags: readonly string[], limit = 10): Promise<MemoryItem[]> {
    const wanted = new Set(tags);
    const hooks = this.recallHooks(null, tags, limit);
    const found = await this.recall((item) => item.tags.some((tag) => wanted.has(tag)), limit);
    this.deps.emit('memories_searched', { query: null, tags: [...tags], result_count: found.length });
    if (hooks) this.recalled(hooks, null, tags, found.length);
    return found;
  }

  /**
   * Tell pre_memory_recall hooks of a recall and answer the hooks (with the start time) when post_memory_recall
   * hooks must hear of its end; undefined, building nothing, when neither event is hooked.
   */
  private recallHooks(
    query: string | null,
    tags: readonly string[],
    limit: number,
  ): { hooks: GovernanceHooks; startedMs: number } | undefined {
    const hooks = this.deps.hooks?.current?.governance.hooks;
    if (!hooks || this.deps.sessionId === undefined) return undefined;
    const pre = hooks.wants('pre_memory_recall');
    if (!pre && !hooks.wants('post_memory_recall')) return undefined;
    const sessionId = this.deps.sessionId;
    if (pre)
      hooks.observe('pre_memory_recall', { session_id: sessionId, query, tags: [...tags], limit }, { sessionId });
    return { hooks, startedMs: this.deps.hostEnv.now() };
  }

  private recalled(
    { hooks, startedMs }: { hooks: GovernanceHooks; startedMs: number },
    query: string | null,
    tags: readonly string[],
    count: number,
  ): void {
    const sessionId = this.deps.sessionId ?? '';
    if (!hooks.wants('post_memory_recall')) return;
    hooks.observe(
      'post_memory_recall',
      {
        session_id: sessionId,
        query,
        tags: [...tags],
        items_count: count,
        duration_ms: Math.max(0, this.deps.hostEnv.now() - startedMs),
      },
      { sessionId },
    );
  }

  /** The newest `limit` items, newest first (reading them is no recall: access counts stay). */
  async recent(limit = 10): Promise<MemoryItem[]> {
    const items = await this.deps.store.list(this.deps.scope);
    return items.reverse().slice(0, limit);
  }

  /** The seed's memoryStats. */
  async stats(): Promise<MemoryStats> {
    const longTerm = await this.deps.store.list(this.deps.scope);
    return { longTermCount: longTerm.length, shortTermCount: this.shortTerm.length, workingCount: this.working.length };
  }

  /** The working tier now (the seed's getWorking): at most WORKING_MAX items, kept by relevance. */
  getWorking(): MemoryItem[] {
    return [...this.working];
  }

  /** The short-term ring now, oldest first (the seed's getShortTerm): this session's last SHORT_TERM_MAX items. */
  getShortTerm(): MemoryItem[] {
    return [...this.shortTerm];
  }

  /** Empty the working tier (the seed's clearWorking); emits memory_cleared {tier: "working", count}. */
  clearWorking(): number {
    const count = this.working.length;
    this.working = [];
    this.deps.emit('memory_cleared', { tier: 'working', count });
    return count;
  }

  /** Empty the short-term ring (the seed's clearShortTerm); long-term and working stay; emits memory_cleared {tier: "short_term", count}. */
  clearShortTerm(): number {
    const count = this.shortTerm.length;
    this.shortTerm.length = 0;
    this.deps.emit('memory_cleared', { tier: 'short_term', count });
    return count;
  }

  private async remember(
    content: string,
    importance: number,
    tags: string[],
    memoryType: MemoryType,
    metadata: Record<string, unknown>,
  ): Promise<MemoryItem> {
    const { hostEnv, store, scope, emit } = this.deps;
    const item: MemoryItem = {
      id: hostEnv.newId('mem'),
      content,
      timestamp: hostEnv.now(),
      importance,
      tags,
      memory_type: memoryType,
      metadata,
      access_count: 0,
    };
    await store.put(scope, item);
    this.shortTerm.push(item);
    if (this.shortTerm.length > SHORT_TERM_MAX) this.shortTerm.splice(0, this.shortTerm.length - SHORT_TERM_MAX);
    this.addWorking(item);
    emit('memory_stored', {
      memory_id: item.id,
      memory_type: item.memory_type,
      importance: item.importance,
      tags: [...item.tags],
    });
    return item;
  }

  /** Matching items by relevance (ties: newest first), each counted as accessed and reported as recalled. */
  private async recall(matches: (item: MemoryItem) => boolean, limit: number): Promise<MemoryItem[]> {
    const { store, scope, hostEnv, emit } = this.deps;
    const now = hostEnv.now();
    const scored = (await store.list(scope))
      .filter(matches)
      .map((item) => ({ item, relevance: memoryRelevance(item, now) }))
      .sort((a, b) => b.relevance - a.relevance || b.item.timestamp - a.item.timestamp)
      .slice(0, limit);
    const out: MemoryItem[] = [];
    for (const { item, relevance } of scored) {
      const accessed: MemoryItem = { ...item, access_count: item.access_count + 1, last_accessed: now };
      await store.put(scope, accessed);
      emit('memory_recalled', { memory_id: item.id, content: item.content, relevance });
      out.push(accessed);
    }
    return out;
  }

  private addWorking(item: MemoryItem): void {
    this.working.push(item);
    if (this.working.length <= WORKING_MAX) return;
    const now = this.deps.hostEnv.now();
    this.working = [...this.working]
      .sort((a, b) => memoryRelevance(b, now) - memoryRelevance(a, now) || b.timestamp - a.timestamp)
      .slice(0, WORKING_MAX);
  }
}

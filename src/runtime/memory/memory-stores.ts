import type { MemoryScope, MemoryItemStore } from '../../stores/memory-item-store.js';
import { ProcessMemoryItemStore } from '../../stores/process-memory-item-store.js';
import type { HostEnv } from '../ports/host-env.js';
import { AgentMemory, type MemoryEventSink, type MemoryHookSource } from './agent-memory.js';

/** The long-term stores a session's `memoryStore` picks from: `file` = the server's durable one, `memory` = this process. */
export interface MemoryStores {
  readonly durable: MemoryItemStore;
  readonly process: MemoryItemStore;
}

/** Stores for an embedder without a durable memory backend: both kinds live in this process. */
export function processMemoryStores(): MemoryStores {
  const store = new ProcessMemoryItemStore();
  return { durable: store, process: store };
}

/** The session's AgentMemory for its resolved memoryStore choice, or undefined when it has none. */
export function openAgentMemory(
  choice: { readonly type: 'file' | 'memory'; readonly namespace: string } | null,
  tenantId: string,
  stores: MemoryStores,
  hostEnv: HostEnv,
  emit: MemoryEventSink,
  hooks?: { sessionId: string; source: MemoryHookSource },
): AgentMemory | undefined {
  if (!choice) return undefined;
  const scope: MemoryScope = { tenantId, namespace: choice.namespace };
  const store = choice.type === 'file' ? stores.durable : stores.process;
  if (!hooks) return new AgentMemory({ store, scope, hostEnv, emit });
  return new AgentMemory({ store, scope, hostEnv, emit, sessionId: hooks.sessionId, hooks: hooks.source });
}

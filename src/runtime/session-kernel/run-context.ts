import { SKILLS_CATALOG_HEADER } from '../prompt/system-prompt.js';
import type { RecalledContext } from '../memory/memory-context.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';

/** A context provider of a run: the AGENTS.md chain, the skill catalog, the memory recall. */
export type ContextProvider = 'agents_md' | 'skills' | 'memory';

const ORDER: readonly ContextProvider[] = ['agents_md', 'skills', 'memory'];
// One frozen list per combination, so naming a run's providers allocates nothing.
const LISTS: readonly (readonly ContextProvider[])[] = Array.from({ length: 8 }, (_, bits) =>
  Object.freeze(ORDER.filter((_, i) => (bits & (1 << i)) !== 0)),
);

/** Estimated tokens of context text: four characters a token (the estimate of the budget check). */
const CHARS_PER_TOKEN = 4;

/** The providers a run's context is assembled from (context_resolving.providers), in a fixed order. */
export function contextProviders(config: ResolvedSessionConfig, hasMemory: boolean): readonly ContextProvider[] {
  const bits = (config.agentsMd !== '' ? 1 : 0) | (config.skills.size > 0 ? 2 : 0) | (hasMemory ? 4 : 0);
  return LISTS[bits]!;
}

/**
 * What a run's context resolved to (context_resolved): one item for the AGENTS.md chain, one for the skill
 * catalog, one per recalled memory item; their tokens estimated from their lengths (no hashing, no walk).
 */
export function resolvedContext(
  config: ResolvedSessionConfig,
  recalled: RecalledContext,
): { total_items: number; total_tokens: number } {
  let items = recalled.items;
  let chars = recalled.section.length;
  if (config.agentsMd !== '') {
    items += 1;
    chars += config.agentsMd.length;
  }
  if (config.skills.size > 0) {
    items += 1;
    chars += SKILLS_CATALOG_HEADER.length;
  }
  return { total_items: items, total_tokens: Math.ceil(chars / CHARS_PER_TOKEN) };
}

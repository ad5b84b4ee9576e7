import type { ChatMessage } from '../../protocol/chat-message.js';
import type { AgentMemory } from './agent-memory.js';

/** Items the memory context provider puts into a run's context, as in the seed. */
export const MEMORY_CONTEXT_ITEMS = 5;
/** Characters of recalled memory one run's context carries at most (about 2000 tokens). */
export const MEMORY_CONTEXT_CHARS = 8_000;
/** Characters of the prompt and of the response a completed run records. */
export const MEMORY_RECORD_CHARS = 4_000;

const HEADER =
  '## Relevant memory\nThese notes were recalled from earlier runs of this memory namespace; use them when they help, and ignore them when they do not apply.';

/** What the memory context provider recalled for a run: its system-prompt section and how many items it holds. */
export interface RecalledContext {
  readonly section: string;
  readonly items: number;
}

/** Nothing recalled. */
export const NOTHING_RECALLED: RecalledContext = Object.freeze({ section: '', items: 0 });

/**
 * The memory context provider's read side: a system-prompt section with up to five items recalled by
 * `input`, cut to MEMORY_CONTEXT_CHARS; empty when nothing matches.
 */
export async function memoryContextSection(memory: AgentMemory, input: string): Promise<string> {
  return (await recallContext(memory, input)).section;
}

/** memoryContextSection with the count of items it carries (for context_resolved). */
export async function recallContext(memory: AgentMemory, input: string): Promise<RecalledContext> {
  const query = input.trim().slice(0, 2000);
  if (query.length === 0) return NOTHING_RECALLED;
  const items = await memory.recallSimilar(query, MEMORY_CONTEXT_ITEMS);
  if (items.length === 0) return NOTHING_RECALLED;
  let budget = MEMORY_CONTEXT_CHARS;
  const lines: string[] = [];
  for (const item of items) {
    const entry = `- [${item.memory_type}; ${item.tags.join(', ')}] ${item.content.replace(/\s*\n\s*/g, ' | ')}`;
    if (budget <= 0) break;
    lines.push(entry.length > budget ? `${entry.slice(0, budget)}…` : entry);
    budget -= entry.length;
  }
  return { section: `${HEADER}\n${lines.join('\n')}`, items: lines.length };
}

/** Cut text to `max` characters, marking the cut. */
export function boundText(text: string, max = MEMORY_RECORD_CHARS): string {
  return text.length > max ? `${text.slice(0, max)}… [${text.length - max} more characters]` : text;
}

/** The memory context provider's write side: a completed run recorded via rememberSuccess(prompt, tools used, response), each bounded. */
export async function recordCompletedRun(
  memory: AgentMemory,
  input: string,
  added: readonly ChatMessage[],
  response: string,
): Promise<void> {
  const tools = [
    ...new Set(added.flatMap((message) => (message.tool_calls ?? []).map((call) => call.function.name))),
  ].slice(0, 64);
  await memory.rememberSuccess(boundText(input), tools, boundText(response));
}

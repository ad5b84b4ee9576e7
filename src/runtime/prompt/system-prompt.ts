import { readFileSync } from 'node:fs';

const BASE = readFileSync(new URL('./base-system.md', import.meta.url), 'utf8').trim();

/** Text for the continuation turn injected when the model stops early. */
export const CONTINUATION_PROMPT = readFileSync(new URL('./continuation.md', import.meta.url), 'utf8').trim();

/** The prompt slots a session may fill. */
export interface PromptSlots {
  role?: string;
  guidelines?: string;
  responseStyle?: string;
  extra?: string;
  agentsMd: string;
}

/** Assemble the system prompt from the base text, the slots and the AGENTS.md chain. */
export function buildSystemPrompt(slots: PromptSlots): string {
  const sections = [slots.role?.trim() ? slots.role.trim() : BASE];
  if (slots.role?.trim()) sections.push(BASE);
  if (slots.guidelines?.trim()) sections.push(`## Guidelines\n${slots.guidelines.trim()}`);
  if (slots.responseStyle?.trim()) sections.push(`## Response style\n${slots.responseStyle.trim()}`);
  if (slots.agentsMd) sections.push(`## Project instructions (AGENTS.md)\n${slots.agentsMd}`);
  if (slots.extra?.trim()) sections.push(slots.extra.trim());
  return sections.join('\n\n');
}

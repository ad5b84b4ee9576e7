import { readFileSync } from 'node:fs';

const BASE = readFileSync(new URL('./base-system.md', import.meta.url), 'utf8').trim();

/** The short skills catalog header: the model finds skills with search_skills (their bodies are not injected). */
export const SKILLS_CATALOG_HEADER = readFileSync(new URL('./skills-catalog.md', import.meta.url), 'utf8').trim();

/** Text for the continuation turn injected when the model stops early. */
export const CONTINUATION_PROMPT = readFileSync(new URL('./continuation.md', import.meta.url), 'utf8').trim();

/** The prompt slots a session may fill. */
export interface PromptSlots {
  role?: string;
  guidelines?: string;
  responseStyle?: string;
  extra?: string;
  agentsMd: string;
  /** The session has searchable skills: add the short catalog header. */
  skillsCatalog?: boolean;
}

/** Assemble the system prompt from the base text, the slots and the AGENTS.md chain. */
export function buildSystemPrompt(slots: PromptSlots): string {
  const sections = [slots.role?.trim() ? slots.role.trim() : BASE];
  if (slots.role?.trim()) sections.push(BASE);
  if (slots.guidelines?.trim()) sections.push(`## Guidelines\n${slots.guidelines.trim()}`);
  if (slots.responseStyle?.trim()) sections.push(`## Response style\n${slots.responseStyle.trim()}`);
  if (slots.skillsCatalog) sections.push(SKILLS_CATALOG_HEADER);
  if (slots.agentsMd) sections.push(`## Project instructions (AGENTS.md)\n${slots.agentsMd}`);
  if (slots.extra?.trim()) sections.push(slots.extra.trim());
  return sections.join('\n\n');
}

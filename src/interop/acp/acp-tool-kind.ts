import type { ToolKind } from '@agentclientprotocol/sdk';

const KINDS: Readonly<Record<string, ToolKind>> = {
  read: 'read',
  ls: 'read',
  write: 'edit',
  edit: 'edit',
  patch: 'edit',
  grep: 'search',
  glob: 'search',
  search_skills: 'search',
  bash: 'execute',
  git: 'execute',
  web_fetch: 'fetch',
  web_search: 'fetch',
};

/** The ACP tool kind an editor shows for one of our tools (`other` for tools it has no icon for). */
export function acpToolKind(toolName: string): ToolKind {
  return KINDS[toolName.toLowerCase()] ?? 'other';
}

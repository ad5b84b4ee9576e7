import { readFile, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** The directories from the git root (or the workspace when not in a repo) down to the workspace. */
export async function agentsMdChain(workspace: string): Promise<string[]> {
  const chain: string[] = [workspace];
  let dir = workspace;
  while (!(await exists(join(dir, '.git')))) {
    const parent = dirname(dir);
    if (parent === dir) return [workspace];
    dir = parent;
    chain.unshift(dir);
  }
  return chain;
}

/**
 * The AGENTS.md instructions that apply to a workspace: every AGENTS.md from the git root down to the
 * workspace, outermost first, within `maxBytes` in all (the rest is cut with a note).
 */
export async function loadAgentsMd(workspace: string, maxBytes: number): Promise<string> {
  const parts: string[] = [];
  let used = 0;
  for (const dir of await agentsMdChain(workspace)) {
    const file = join(dir, 'AGENTS.md');
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      continue;
    }
    const label = relative(workspace, file).split(sep).join('/') || 'AGENTS.md';
    const remaining = maxBytes - used;
    if (remaining <= 0) break;
    const bytes = Buffer.byteLength(text);
    const body = bytes > remaining ? `${Buffer.from(text).subarray(0, remaining).toString('utf8')}\n[AGENTS.md cut at ${maxBytes} bytes]` : text;
    used += Math.min(bytes, remaining);
    parts.push(`<agents_md path="${label}">\n${body.trim()}\n</agents_md>`);
  }
  return parts.join('\n\n');
}

import { lstat, open, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { CodeError, type ErrorCode } from '../../errors.js';
import { isInside } from '../tools/workspace-path.js';
import type { AgentDefinition, AgentSource } from './agent-definition.js';
import { parseAgentFile } from './parse-agent-file.js';

/** Definition files read from one directory at most (more: an error naming the directory). */
export const MAX_AGENT_FILES = 256;
/** Bytes one definition file may have at most (more: an error naming the file). */
export const MAX_AGENT_FILE_BYTES = 256 * 1024;

const DEFINITION = /\.(md|ya?ml)$/i;

/** How one directory is read: its canonical path, how errors name it, where its agents come from. */
export interface AgentDirRequest {
  /** The canonical (realpath) directory. */
  readonly dir: string;
  /** The directory as the caller named it (errors say `<label>/<file>`). */
  readonly label: string;
  readonly source: AgentSource;
  readonly errorCode: ErrorCode;
}

async function readBounded(file: string, shown: string, request: AgentDirRequest): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(MAX_AGENT_FILE_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > MAX_AGENT_FILE_BYTES) throw new CodeError(request.errorCode, `${shown}: larger than ${MAX_AGENT_FILE_BYTES} bytes (the bound of one agent definition)`, { file: shown });
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * The agent definitions (`*.md`, `*.yaml`, `*.yml`, not recursive, in name order) of one directory. Files
 * that are symlinks must resolve inside the directory; a bad file, too many files or a file too large is a
 * CodeError naming it; two files defining one name are refused.
 */
export async function loadAgentDir(request: AgentDirRequest): Promise<AgentDefinition[]> {
  const entries = (await readdir(request.dir, { withFileTypes: true })).filter((entry) => DEFINITION.test(entry.name)).sort((a, b) => (a.name < b.name ? -1 : 1));
  if (entries.length > MAX_AGENT_FILES) {
    throw new CodeError(request.errorCode, `${request.label}: ${entries.length} definition files, more than ${MAX_AGENT_FILES} (the bound of one agent directory)`, { file: request.label });
  }
  const agents: AgentDefinition[] = [];
  const seen = new Map<string, string>();
  for (const entry of entries) {
    const shown = path.posix.join(request.label, entry.name);
    const full = path.join(request.dir, entry.name);
    const info = await lstat(full);
    let target = full;
    if (info.isSymbolicLink()) {
      const resolved = await realpath(full).catch(() => undefined);
      if (resolved === undefined || !isInside(request.dir, resolved)) throw new CodeError(request.errorCode, `${shown}: a symlink leaving the agent directory is refused`, { file: shown });
      target = resolved;
    }
    if (!(await lstat(target)).isFile()) continue;
    const agent = parseAgentFile(await readBounded(target, shown, request), { file: shown, source: request.source, errorCode: request.errorCode });
    const earlier = seen.get(agent.name);
    if (earlier) throw new CodeError(request.errorCode, `${shown}: name: "${agent.name}" is already defined by ${earlier}`, { file: shown, field: 'name' });
    seen.set(agent.name, shown);
    agents.push(agent);
  }
  return agents;
}

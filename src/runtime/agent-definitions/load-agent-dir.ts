import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { CodeError, type ErrorCode } from '../../errors.js';
import { fdPath, type ConfinedRoot } from '../workspace/confined-walk.js';
import { openConfinedFile, readBounded } from '../workspace/read-confined-file.js';
import { NotRegularFileError } from '../workspace/not-regular-file-error.js';
import { WorkspaceEscapeError } from '../workspace/workspace-errors.js';
import type { AgentDefinition, AgentSource } from './agent-definition.js';
import { parseAgentFile } from './parse-agent-file.js';

/** Definition files read from one directory at most (more: an error naming the directory). */
export const MAX_AGENT_FILES = 256;
/** Bytes one definition file may have at most (more: an error naming the file). */
export const MAX_AGENT_FILE_BYTES = 256 * 1024;

const DEFINITION = /\.(md|ya?ml)$/i;

/** How one directory is read: the directory held open, how errors name it, where its agents come from. */
export interface AgentDirRequest {
  /** The directory, held open (its canonical path for absolute link targets inside it). */
  readonly root: ConfinedRoot;
  /** The directory as the caller named it (errors say `<label>/<file>`). */
  readonly label: string;
  readonly source: AgentSource;
  readonly errorCode: ErrorCode;
}

function errnoCode(error: unknown): string | undefined {
  return error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
}

/** The text of one definition file, read below the held directory; undefined for anything but a regular file. */
async function readDefinition(name: string, shown: string, request: AgentDirRequest): Promise<string | undefined> {
  let opened;
  try {
    opened = await openConfinedFile(request.root, name);
  } catch (error) {
    if (error instanceof WorkspaceEscapeError)
      throw new CodeError(request.errorCode, `${shown}: a symlink leaving the agent directory is refused`, {
        file: shown,
      });
    if (error instanceof NotRegularFileError || errnoCode(error) === 'ENOENT') return undefined;
    throw new CodeError(request.errorCode, `${shown}: cannot be read (${errnoCode(error) ?? String(error)})`, {
      file: shown,
    });
  }
  try {
    const { bytes, truncated } = await readBounded(opened.handle, MAX_AGENT_FILE_BYTES);
    if (truncated)
      throw new CodeError(
        request.errorCode,
        `${shown}: larger than ${MAX_AGENT_FILE_BYTES} bytes (the bound of one agent definition)`,
        { file: shown },
      );
    return bytes.toString('utf8');
  } finally {
    await opened.handle.close();
  }
}

/**
 * The agent definitions (`*.md`, `*.yaml`, `*.yml`, not recursive, in name order) of one directory held open.
 * Each file is opened from the held descriptor (see `openConfinedFile`): a symlink must stay inside the
 * directory, only regular files are read; a bad file, too many files or a file too large is a CodeError
 * naming it; two files defining one name are refused.
 */
export async function loadAgentDir(request: AgentDirRequest): Promise<AgentDefinition[]> {
  const entries = (await readdir(fdPath(request.root.fd), { withFileTypes: true }))
    .filter((entry) => DEFINITION.test(entry.name))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  if (entries.length > MAX_AGENT_FILES) {
    throw new CodeError(
      request.errorCode,
      `${request.label}: ${entries.length} definition files, more than ${MAX_AGENT_FILES} (the bound of one agent directory)`,
      { file: request.label },
    );
  }
  const agents: AgentDefinition[] = [];
  const seen = new Map<string, string>();
  for (const entry of entries) {
    const shown = path.posix.join(request.label, entry.name);
    const text = await readDefinition(entry.name, shown, request);
    if (text === undefined) continue;
    const agent = parseAgentFile(text, { file: shown, source: request.source, errorCode: request.errorCode });
    const earlier = seen.get(agent.name);
    if (earlier)
      throw new CodeError(request.errorCode, `${shown}: name: "${agent.name}" is already defined by ${earlier}`, {
        file: shown,
        field: 'name',
      });
    seen.set(agent.name, shown);
    agents.push(agent);
  }
  return agents;
}

import { toolError, type ToolResult } from './define-tool.js';
import { WorkspaceEscapeError, WorkspacePathNotFoundError } from './workspace-path.js';

/** Lines longer than this many characters are cut in tool output (read, grep). */
export const MAX_LINE_CHARS = 2000;

/** How many leading bytes are inspected to decide whether a file is binary. */
export const BINARY_SNIFF_BYTES = 8192;

/** True when the buffer looks like binary data (contains a NUL byte, as git and grep decide). */
export function looksBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, BINARY_SNIFF_BYTES);
  for (let i = 0; i < end; i++) if (bytes[i] === 0) return true;
  return false;
}

/** Cut a line to `MAX_LINE_CHARS`, saying how much was dropped. */
export function truncateLine(line: string, max = MAX_LINE_CHARS): string {
  return line.length > max ? `${line.slice(0, max)}... [line truncated, ${line.length - max} more chars]` : line;
}

/** The errno code of a Node.js system error, if it is one. */
export function errnoCode(error: unknown): string | undefined {
  return error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
}

/** Turn a path-resolution or file-system failure into a tool error result the model can act on. */
export function pathErrorResult(error: unknown, userPath: string, noun: 'File' | 'Directory' | 'Path' = 'File'): ToolResult {
  if (error instanceof WorkspaceEscapeError) return toolError(error.message, { reason: 'workspace_escape' });
  if (error instanceof WorkspacePathNotFoundError) return toolError(`${noun} not found: ${userPath}`, { reason: 'not_found' });
  switch (errnoCode(error)) {
    case 'ENOENT':
      return toolError(`${noun} not found: ${userPath}`, { reason: 'not_found' });
    case 'EISDIR':
      return toolError(`${userPath} is a directory, not a file.`, { reason: 'is_directory' });
    case 'ENOTDIR':
      return toolError(`A parent of ${userPath} is not a directory.`, { reason: 'not_a_directory' });
    case 'EACCES':
    case 'EPERM':
      return toolError(`Permission denied: ${userPath}`, { reason: 'permission_denied' });
    case 'ELOOP':
      return toolError(`Too many levels of symbolic links: ${userPath}`, { reason: 'symlink_loop' });
    default:
      return toolError(`Cannot access ${userPath}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

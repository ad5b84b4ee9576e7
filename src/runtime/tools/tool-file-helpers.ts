import { toolError, type ToolResult } from './define-tool.js';
import { NotRegularFileError } from '../workspace/not-regular-file-error.js';
import {
  WorkspaceChangedError,
  WorkspaceEscapeError,
  WorkspacePathNotFoundError,
} from '../workspace/workspace-errors.js';

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

/** The tool error of a call whose session workspace is no longer the pinned directory (the run goes on). */
export function workspaceChangedResult(error: WorkspaceChangedError): ToolResult {
  return {
    ...toolError(error.message, { reason: 'workspace_changed', code: 'WORKSPACE_CHANGED' }),
    errorKind: { type: 'invalid_argument', message: error.message },
  };
}

/** Turn a path-resolution or file-system failure into a tool error result the model can act on. */
export function pathErrorResult(
  error: unknown,
  userPath: string,
  noun: 'File' | 'Directory' | 'Path' = 'File',
): ToolResult {
  if (error instanceof WorkspaceChangedError) return workspaceChangedResult(error);
  if (error instanceof WorkspaceEscapeError) {
    return {
      ...toolError(error.message, { reason: 'workspace_escape' }),
      errorKind: { type: 'invalid_argument', message: error.message },
    };
  }
  if (error instanceof WorkspacePathNotFoundError || errnoCode(error) === 'ENOENT') {
    return {
      ...toolError(`${noun} not found: ${userPath}`, { reason: 'not_found' }),
      errorKind: { type: 'not_found', path: userPath },
    };
  }
  if (error instanceof NotRegularFileError)
    return toolError(error.message, { reason: error.kind === 'directory' ? 'is_directory' : 'not_a_file' });
  switch (errnoCode(error)) {
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

/**
 * `pathErrorResult` for a path that must exist: a parent that is not a directory means the file is not there
 * (as a missing parent does), not a separate fault.
 */
export function existingPathErrorResult(
  error: unknown,
  userPath: string,
  noun: 'File' | 'Directory' | 'Path' = 'File',
): ToolResult {
  return pathErrorResult(
    errnoCode(error) === 'ENOTDIR' ? new WorkspacePathNotFoundError(userPath) : error,
    userPath,
    noun,
  );
}

/** Most UTF-8 bytes of file content a `before`/`after` metadata field carries (the rest is cut, and flagged). */
export const MAX_CONTENT_METADATA_BYTES = 256 * 1024;

/**
 * A file's content as a metadata field: the text itself, or its first MAX_CONTENT_METADATA_BYTES (cut on
 * a character boundary) with `<key>_truncated: true`, so a huge file cannot flood events. `totalBytes`
 * is the full content's size when `text` is already only its head.
 */
export function contentMetadata(
  key: 'before' | 'after',
  text: string,
  totalBytes = Buffer.byteLength(text, 'utf8'),
): Record<string, unknown> {
  if (totalBytes <= MAX_CONTENT_METADATA_BYTES) return { [key]: text };
  let cut = Buffer.from(text, 'utf8').subarray(0, MAX_CONTENT_METADATA_BYTES).toString('utf8');
  if (cut.endsWith('\uFFFD')) cut = cut.slice(0, -1);
  return { [key]: cut, [`${key}_truncated`]: true };
}

/** Lines in a text as the seed counts them: line breaks, plus one for a last line without a newline. */
export function countLines(text: string): number {
  if (text === '') return 0;
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  return text.endsWith('\n') ? count : count + 1;
}

/** The offset a listing cursor stands for (cursors are the decimal offsets we hand out), or an error message naming the tool. */
export function parseCursor(cursor: string | undefined, tool: string): number | string {
  if (cursor === undefined) return 0;
  if (!/^\d{1,9}$/.test(cursor))
    return `Invalid cursor ${JSON.stringify(cursor)}; pass the cursor value from a previous ${tool} call.`;
  return Number(cursor);
}

/** A requested page of a listing: where it starts and how many entries it may hold. */
export interface ListPageRequest {
  readonly offset: number;
  readonly limit: number;
  readonly requestedLimit: number;
}

/** The seed's page metadata for `returned` entries of `total` (null when unknown), as git's lists report it too. */
export function listPageMetadata(
  request: ListPageRequest,
  returned: number,
  nextCursor: string | null,
  total: number | null,
): Record<string, unknown> {
  return {
    offset: request.offset,
    requested_limit: request.requestedLimit,
    applied_limit: request.limit,
    returned_items: returned,
    total_items: total,
    next_cursor: nextCursor,
    truncated: nextCursor !== null,
    limit_clamped: request.requestedLimit !== request.limit,
  };
}

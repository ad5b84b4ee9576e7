import { listPageMetadata, type ListPageRequest } from '../tool-file-helpers.js';
import { DEFAULT_DIFF_BYTES, type GitArgs } from './git-params.js';

/** A requested page: where it starts and how many entries it holds. */
export type PageRequest = ListPageRequest;

/** The page of a list: its entries and the seed's page metadata. */
export interface Page<T> {
  readonly items: T[];
  readonly nextCursor: string | null;
  readonly metadata: Record<string, unknown>;
}

/** The page request of a list or log call; an error message when the cursor is not one we returned. */
export function pageRequest(args: GitArgs, defaultLimit: number): PageRequest | string {
  const limit = args.limit ?? args.max_count ?? defaultLimit;
  if (args.cursor !== undefined && !/^\d{1,9}$/.test(args.cursor)) {
    return `Invalid cursor ${JSON.stringify(args.cursor)}; pass the cursor value from a previous git call.`;
  }
  return { offset: args.cursor === undefined ? 0 : Number(args.cursor), limit, requestedLimit: limit };
}

/** One page of a fully listed collection; an error message when the cursor is past its end. */
export function pageOf<T>(all: readonly T[], request: PageRequest): Page<T> | string {
  if (request.offset > all.length) return `cursor offset ${request.offset} exceeds the ${all.length} available entries`;
  const end = Math.min(all.length, request.offset + request.limit);
  const nextCursor = end < all.length ? String(end) : null;
  const items = all.slice(request.offset, end);
  return { items, nextCursor, metadata: listPageMetadata(request, items.length, nextCursor, all.length) };
}

/** One page of a diff, cut on UTF-8 character boundaries, with the seed's range metadata. */
export function diffPage(diff: string, args: GitArgs): { output: string; metadata: Record<string, unknown> } | string {
  const bytes = Buffer.from(diff, 'utf8');
  const offset = args.byte_offset ?? 0;
  const maxBytes = args.max_bytes ?? DEFAULT_DIFF_BYTES;
  const boundary = (at: number) => at === bytes.length || (bytes[at] & 0xc0) !== 0x80;
  if (offset > bytes.length || !boundary(offset))
    return `byte_offset ${offset} is outside the diff or not on a UTF-8 boundary`;
  let end = Math.min(bytes.length, offset + maxBytes);
  while (end > offset && !boundary(end)) end--;
  const next = end < bytes.length ? end : null;
  let output = bytes.subarray(offset, end).toString('utf8');
  if (next !== null) output += `\n\n... (more diff available; continue with byte_offset=${next})\n`;
  return {
    output,
    metadata: {
      range: {
        byte_offset: offset,
        requested_max_bytes: maxBytes,
        applied_max_bytes: maxBytes,
        returned_bytes: end - offset,
        total_bytes: bytes.length,
        next_byte_offset: next,
        eof: next === null,
        limit_clamped: false,
      },
    },
  };
}

/** A remote URL without credentials, query or fragment (remote output reaches transcripts and events). */
export function sanitizeRemoteUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw;
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  return url.toString();
}

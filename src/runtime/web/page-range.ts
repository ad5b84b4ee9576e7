/** The seed's `range` metadata of a paged web_fetch result. */
export interface PageRange {
  offset: number;
  requested_max_chars: number;
  applied_max_chars: number;
  returned_chars: number;
  total_chars: number;
  next_offset: number | null;
  eof: boolean;
  limit_clamped: boolean;
}

/** One page of converted content and its range. */
export interface ContentPage {
  readonly text: string;
  readonly range: PageRange;
}

/**
 * Cut `max_chars` characters (UTF-16 code units, never splitting a surrogate pair) from `offset`. A limit
 * above `maxLimit` is clamped (`limit_clamped`); `next_offset` is null at the end. Undefined when `offset`
 * is past the end (the caller answers an error naming the length).
 */
export function pageOf(content: string, offset: number, requested: number, maxLimit: number): ContentPage | undefined {
  const total = content.length;
  if (offset > total) return undefined;
  const applied = Math.min(requested, maxLimit);
  let end = Math.min(total, offset + applied);
  // Do not end between the two halves of a surrogate pair.
  if (end < total && end > offset) {
    const code = content.charCodeAt(end - 1);
    // A page of one character that is half a pair takes the whole pair instead of nothing.
    if (code >= 0xd800 && code <= 0xdbff) end += end - 1 > offset ? -1 : 1;
  }
  const text = content.slice(offset, end);
  const eof = end >= total;
  return {
    text,
    range: {
      offset,
      requested_max_chars: requested,
      applied_max_chars: applied,
      returned_chars: text.length,
      total_chars: total,
      next_offset: eof ? null : end,
      eof,
      limit_clamped: applied < requested,
    },
  };
}

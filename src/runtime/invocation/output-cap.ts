/** The result of capping text to a byte budget. */
export interface CappedText {
  text: string;
  truncated: boolean;
  totalBytes: number;
}

/** Cut text to at most `maxBytes` UTF-8 bytes without splitting a character. */
export function capOutput(text: string, maxBytes: number): CappedText {
  const totalBytes = Buffer.byteLength(text, 'utf8');
  if (totalBytes <= maxBytes) return { text, truncated: false, totalBytes };
  const cut = Buffer.from(text, 'utf8').subarray(0, maxBytes).toString('utf8');
  // A split multi-byte character decodes to U+FFFD at the end; drop it.
  return { text: cut.endsWith('\uFFFD') ? cut.slice(0, -1) : cut, truncated: true, totalBytes };
}

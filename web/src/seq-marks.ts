/**
 * Record on an element the session_sequence of an event it shows. Every rendered event lands in exactly
 * one element's `data-seqs` (space-separated), so what the page shows can be checked against the server's log.
 */
export function markSeq(element: HTMLElement, sequence: number | undefined): void {
  if (sequence === undefined) return;
  const before = element.dataset.seqs;
  element.dataset.seqs = before ? `${before} ${sequence}` : String(sequence);
}

/** The session_sequence of an event's metadata (undefined for control events such as replay_gap). */
export function sequenceOf(metadata: Record<string, unknown>): number | undefined {
  const value = metadata.session_sequence;
  return typeof value === 'number' ? value : undefined;
}

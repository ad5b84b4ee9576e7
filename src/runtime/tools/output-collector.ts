/** Default bound of collected process output: 10 MiB, counted in UTF-16 characters. */
export const MAX_COLLECTED_OUTPUT = 10 * 1024 * 1024;

/**
 * Keeps at most `max` characters of a growing output: the first half and the most recent half,
 * with a marker saying how much was dropped in between (errors tend to be at the end).
 */
export class OutputCollector {
  private head = '';
  private tail: string[] = [];
  private tailLength = 0;
  private dropped = 0;
  private readonly half: number;

  constructor(max = MAX_COLLECTED_OUTPUT) {
    this.half = Math.max(1, Math.floor(max / 2));
  }

  /** Characters dropped from the middle so far. */
  get droppedChars(): number {
    return this.dropped;
  }

  /** Add output at the end. */
  append(text: string): void {
    if (text.length === 0) return;
    let rest = text;
    if (this.tailLength === 0 && this.head.length < this.half) {
      const room = this.half - this.head.length;
      this.head += rest.slice(0, room);
      rest = rest.slice(room);
      if (rest.length === 0) return;
    }
    this.tail.push(rest);
    this.tailLength += rest.length;
    while (this.tailLength > this.half) {
      const first = this.tail[0];
      const excess = this.tailLength - this.half;
      if (first.length <= excess) {
        this.tail.shift();
        this.tailLength -= first.length;
        this.dropped += first.length;
      } else {
        this.tail[0] = first.slice(excess);
        this.tailLength -= excess;
        this.dropped += excess;
      }
    }
  }

  /** The kept output, with an omission marker when the middle was dropped. */
  toString(): string {
    const tail = this.tail.join('');
    if (this.dropped === 0) return this.head + tail;
    return `${this.head}\n\n... [${this.dropped} characters of output omitted] ...\n\n${tail}`;
  }
}

// Each range is three numbers of one flat array: its first sequence, how many it holds, and how many
// entries were pushed before it (so a position is found by binary search).
const FIRST = 0;
const COUNT = 1;
const BEFORE = 2;
const WIDTH = 3;

/**
 * A FIFO list of session sequences (one run's retained events, or the run-less ones), kept as ranges of
 * consecutive numbers: the events of one run mostly follow each other, so a run of any length usually
 * costs one range, not a number per event. Positions count from the oldest entry still held.
 */
export class SequenceRanges {
  private ranges: number[] = [];
  /** Index of the first range still holding entries. */
  private head = 0;
  /** Entries shifted off the front so far. */
  private shifted = 0;
  private pushed = 0;

  /** Number of entries held. */
  get length(): number {
    return this.pushed - this.shifted;
  }

  /** Add a sequence after every entry. */
  push(sequence: number): void {
    const ranges = this.ranges;
    const last = ranges.length - WIDTH;
    if (last >= this.head * WIDTH && ranges[last + FIRST] + ranges[last + COUNT] === sequence)
      ranges[last + COUNT] += 1;
    // A literal has room for exactly one range: most lists never need a second.
    else if (ranges.length === 0) this.ranges = [sequence, 1, this.pushed];
    else ranges.push(sequence, 1, this.pushed);
    this.pushed += 1;
  }

  /** Remove and return the oldest entry. */
  shift(): number | undefined {
    if (this.length === 0) return undefined;
    const at = this.head * WIDTH;
    const sequence = this.ranges[at + FIRST] + (this.shifted - this.ranges[at + BEFORE]);
    this.shifted += 1;
    if (this.shifted === this.ranges[at + BEFORE] + this.ranges[at + COUNT]) this.dropHead();
    return sequence;
  }

  /** The entry at `position` (0: the oldest held). */
  at(position: number): number {
    const entry = this.shifted + position;
    const ranges = this.ranges;
    let lo = this.head;
    let hi = ranges.length / WIDTH - 1;
    // The last range whose first entry is at or before `entry`.
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (ranges[mid * WIDTH + BEFORE] <= entry) lo = mid;
      else hi = mid - 1;
    }
    return ranges[lo * WIDTH + FIRST] + (entry - ranges[lo * WIDTH + BEFORE]);
  }

  /** Every entry, oldest first. */
  toArray(): number[] {
    const out: number[] = [];
    for (let position = 0; position < this.length; position += 1) out.push(this.at(position));
    return out;
  }

  /** Replace the entries (a restore puts them in a new order). */
  reset(sequences: readonly number[]): void {
    this.ranges = [];
    this.head = 0;
    this.shifted = 0;
    this.pushed = 0;
    for (const sequence of sequences) this.push(sequence);
  }

  /** Forget the emptied first range; drop emptied ranges from the array once they are half of it. */
  private dropHead(): void {
    this.head += 1;
    if (this.head * WIDTH * 2 >= this.ranges.length) {
      this.ranges = this.ranges.slice(this.head * WIDTH);
      this.head = 0;
    }
  }
}

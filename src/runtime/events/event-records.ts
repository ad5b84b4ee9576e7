import type { EventEnvelope } from '../../protocol/event-envelope.js';
import { EventOrigin } from './event-origin.js';

/** An event kept as it came in (restored from a snapshot's trace): it is read back exactly as it went in. */
class VerbatimEvent {
  constructor(readonly envelope: EventEnvelope) {}
}

// One record is STRIDE consecutive slots of an array: no object (and no object header) per event. The
// sequences and the time offset are small integers (Smis), which an array of mixed values holds without
// a HeapNumber each (a timestamp in ms is not a Smi: kept as such it would be one); the type and the
// payload are the event's own; the origin slot is shared by every event of a run. A dropped record keeps
// only its sequences (the binary search reads them) until compaction.
const STRIDE = 6;
const SESSION_SEQUENCE = 0;
const SEQUENCE = 1;
const TIME = 2;
const TYPE = 3;
const PAYLOAD = 4;
const ORIGIN = 5;

// Records live in chunks of CHUNK records, each allocated once at its final size: a growing flat array
// would be copied at every growth (about twice its final size allocated in all) and keep up to a third
// of its capacity empty; a chunk wastes at most its unfilled records.
const CHUNK_SHIFT = 3;
const CHUNK = 1 << CHUNK_SHIFT;
const CHUNK_MASK = CHUNK - 1;

// Dropped records stay until they outnumber the live ones (amortised O(1)).
const COMPACT_MIN_DROPPED = 256;

/**
 * The events of one session in session order, each stored compactly: its type, payload, timestamp (an
 * offset from the first event's), sequences and a reference to its run's shared EventOrigin. Envelopes
 * are built when an event is read. Records are addressed by index; an index is valid until the next
 * `compact()` or `sort()`, a session_sequence for ever.
 */
export class EventRecords {
  private chunks: unknown[][] = [];
  private count = 0;
  private baseTime: number | undefined;
  private droppedCount = 0;

  /** Number of records, dropped ones included (indices run from 0 to this). */
  get length(): number {
    return this.count;
  }

  /** Number of records not dropped. */
  get retained(): number {
    return this.count - this.droppedCount;
  }

  /**
   * Add an event of `origin` after every record; false (nothing added) when its timestamp does not survive
   * being kept as an offset exactly (not a safe integer), which a caller then keeps verbatim.
   */
  push(
    origin: EventOrigin,
    type: string,
    payload: Record<string, unknown>,
    timestampMs: number,
    sequence: number,
    sessionSequence: number,
  ): boolean {
    const base = this.baseTime ?? timestampMs;
    const offset = timestampMs - base;
    if (!Number.isSafeInteger(timestampMs) || base + offset !== timestampMs) return false;
    this.baseTime = base;
    this.write(sessionSequence, sequence, offset, type, payload, origin);
    return true;
  }

  /** Add an event kept verbatim (its envelope is what every read returns) after every record. */
  pushVerbatim(envelope: EventEnvelope): void {
    const { session_sequence: sessionSequence, sequence } = envelope.metadata;
    this.write(sessionSequence, sequence ?? 0, 0, envelope.type, undefined, new VerbatimEvent(envelope));
  }

  /** The envelope of record `index`, built now (a verbatim record returns its own). */
  envelopeAt(index: number): EventEnvelope {
    const chunk = this.chunks[index >>> CHUNK_SHIFT];
    const at = (index & CHUNK_MASK) * STRIDE;
    const origin = chunk[at + ORIGIN] as EventOrigin | VerbatimEvent;
    if (origin instanceof VerbatimEvent) return origin.envelope;
    const time = (this.baseTime ?? 0) + (chunk[at + TIME] as number);
    return origin.envelope(
      chunk[at + TYPE] as string,
      chunk[at + PAYLOAD] as Record<string, unknown>,
      time,
      chunk[at + SEQUENCE] as number,
      chunk[at + SESSION_SEQUENCE] as number,
    );
  }

  /** The session_sequence of record `index`. */
  sessionSequenceAt(index: number): number {
    return this.chunks[index >>> CHUNK_SHIFT][(index & CHUNK_MASK) * STRIDE + SESSION_SEQUENCE] as number;
  }

  /** The per-run sequence of record `index` (0 for a run-less event). */
  sequenceAt(index: number): number {
    return this.chunks[index >>> CHUNK_SHIFT][(index & CHUNK_MASK) * STRIDE + SEQUENCE] as number;
  }

  /** True once record `index` was dropped. */
  isDropped(index: number): boolean {
    return this.chunks[index >>> CHUNK_SHIFT][(index & CHUNK_MASK) * STRIDE + ORIGIN] === undefined;
  }

  /** Drop record `index`, releasing its payload (and its share of the origin) at once. Idempotent. */
  drop(index: number): void {
    const chunk = this.chunks[index >>> CHUNK_SHIFT];
    const at = (index & CHUNK_MASK) * STRIDE;
    if (chunk[at + ORIGIN] === undefined) return;
    chunk[at + TYPE] = undefined;
    chunk[at + PAYLOAD] = undefined;
    chunk[at + ORIGIN] = undefined;
    this.droppedCount += 1;
  }

  /** Index of the first record with session_sequence > after (binary search; dropped records keep their place). */
  indexAfter(after: number): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.sessionSequenceAt(mid) > after) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Index of the record with this session_sequence, or -1. */
  indexOf(sessionSequence: number): number {
    const index = this.indexAfter(sessionSequence - 1);
    return index < this.count && this.sessionSequenceAt(index) === sessionSequence ? index : -1;
  }

  /** Remove dropped records once they outnumber the live ones (indices change; session sequences stay). */
  compact(): void {
    if (this.droppedCount < COMPACT_MIN_DROPPED || this.droppedCount * 2 < this.count) return;
    // In place: each kept record moves down to the next free index.
    let kept = 0;
    for (let index = 0; index < this.count; index += 1) {
      if (this.isDropped(index)) continue;
      if (kept !== index) {
        const from = this.chunks[index >>> CHUNK_SHIFT];
        const to = this.chunks[kept >>> CHUNK_SHIFT];
        const at = (index & CHUNK_MASK) * STRIDE;
        const into = (kept & CHUNK_MASK) * STRIDE;
        for (let k = 0; k < STRIDE; k += 1) to[into + k] = from[at + k];
      }
      kept += 1;
    }
    this.chunks.length = (kept + CHUNK_MASK) >>> CHUNK_SHIFT;
    // The last chunk's records past the end were moved down: forget them.
    const last = this.chunks.at(-1);
    if (last !== undefined) last.fill(undefined, (kept & CHUNK_MASK) * STRIDE || last.length);
    this.count = kept;
    this.droppedCount = 0;
  }

  /** Restore order after records were added out of session order (a snapshot's trace), removing dropped records. */
  sort(): void {
    const records = this.keptRecords();
    records.sort((a, b) => (a[SESSION_SEQUENCE] as number) - (b[SESSION_SEQUENCE] as number));
    this.rebuild(records);
  }

  private keptRecords(): unknown[][] {
    const records: unknown[][] = [];
    for (let index = 0; index < this.count; index += 1) {
      if (this.isDropped(index)) continue;
      const at = (index & CHUNK_MASK) * STRIDE;
      records.push(this.chunks[index >>> CHUNK_SHIFT].slice(at, at + STRIDE));
    }
    return records;
  }

  private rebuild(records: readonly unknown[][]): void {
    this.chunks = [];
    this.count = 0;
    this.droppedCount = 0;
    for (const record of records) this.write(...(record as [number, number, number, string, unknown, unknown]));
  }

  private write(
    sessionSequence: number,
    sequence: number,
    offset: number,
    type: string,
    payload: unknown,
    origin: unknown,
  ): void {
    const index = this.count;
    if ((index & CHUNK_MASK) === 0) this.chunks.push(new Array<unknown>(CHUNK * STRIDE));
    const chunk = this.chunks[index >>> CHUNK_SHIFT];
    const at = (index & CHUNK_MASK) * STRIDE;
    chunk[at + SESSION_SEQUENCE] = sessionSequence;
    chunk[at + SEQUENCE] = sequence;
    chunk[at + TIME] = offset;
    chunk[at + TYPE] = type;
    chunk[at + PAYLOAD] = payload;
    chunk[at + ORIGIN] = origin;
    this.count = index + 1;
  }
}

/** The payload sizes of a run's retained events, oldest first, and their sum (a byte-bounded log only). */
export class PayloadSizes {
  private readonly sizes: number[] = [];
  private head = 0;
  total = 0;

  push(bytes: number): void {
    this.sizes.push(bytes);
    this.total += bytes;
  }

  shift(): void {
    const bytes = this.sizes[this.head];
    if (bytes === undefined) return;
    this.head += 1;
    this.total -= bytes;
    if (this.head > 1024 && this.head * 2 > this.sizes.length) {
      this.sizes.splice(0, this.head);
      this.head = 0;
    }
  }
}

/** The bytes an event's payload counts against maxEventBytesPerRun: its compact JSON in UTF-8. */
export function payloadBytes(payload: unknown): number {
  return Buffer.byteLength(JSON.stringify(payload) ?? '', 'utf8');
}

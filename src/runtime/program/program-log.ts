/** Cut `text` to at most `maxBytes` UTF-8 bytes without leaving half a character behind. */
export function cutToBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = Math.max(0, maxBytes);
  // Step back over continuation bytes (10xxxxxx) so the cut lands on a character boundary.
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/** A program's console output: one line per console call, keeping the first `maxBytes` bytes. */
export class ProgramLog {
  private readonly lines: string[] = [];
  private bytes = 0;
  private droppedBytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** Add one console line (its newline counts towards the bound). */
  append(line: string): void {
    const size = Buffer.byteLength(line) + 1;
    const room = this.maxBytes - this.bytes;
    if (size <= room) {
      this.lines.push(line);
      this.bytes += size;
      return;
    }
    if (room > 1) {
      const kept = cutToBytes(line, room - 1);
      this.lines.push(kept);
      this.bytes += Buffer.byteLength(kept) + 1;
      this.droppedBytes += size - Buffer.byteLength(kept) - 1;
    } else {
      this.droppedBytes += size;
    }
  }

  /** Count bytes the sandbox dropped before they reached the host. */
  dropped(bytes: number): void {
    this.droppedBytes += bytes;
  }

  /** The collected lines, with a closing note when some output was dropped. */
  text(): string {
    const body = this.lines.join('\n');
    if (this.droppedBytes === 0) return body;
    const note = `[logs truncated at limits.maxOutputBytes (${this.maxBytes} bytes); ${this.droppedBytes} more bytes dropped]`;
    return body ? `${body}\n${note}` : note;
  }
}

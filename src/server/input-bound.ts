import { CodeError } from '../errors.js';

/**
 * A run's input is bounded by limits.maxInputBytes (UTF-8 bytes), checked before the run is admitted, so an
 * over-long input never reaches the transcript or a provider. `history` (a side question's own transcript,
 * never stored) is bounded by the body limit only. A steer's input is bounded the same way (`field` names it).
 */
export function assertInputBound(input: string, maxBytes: number, field = 'input'): void {
  // Cheap first: a string of at most maxBytes / 3 UTF-16 units cannot exceed maxBytes UTF-8 bytes.
  if (input.length * 3 <= maxBytes) return;
  const bytes = Buffer.byteLength(input, 'utf8');
  if (bytes > maxBytes) {
    throw new CodeError(
      'PAYLOAD_TOO_LARGE',
      `${field}: ${bytes} bytes exceed limits.maxInputBytes (${maxBytes} UTF-8 bytes)`,
      { field, limit: 'limits.maxInputBytes', maxBytes, bytes },
    );
  }
}

import type { Response } from 'undici';

/** A body read up to a cap: the bytes, and whether the body went on beyond the cap (the rest was not read). */
export interface CappedBody {
  readonly bytes: Buffer;
  readonly overflow: boolean;
}

/**
 * Read a response body, stopping at `capBytes` (decoded bytes, so a compressed bomb stops too): reading
 * ends and the stream is cancelled as soon as the cap is passed. A declared Content-Length above the cap
 * is an overflow before anything is read.
 */
export async function readCappedBody(response: Response, capBytes: number): Promise<CappedBody> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  const encoded = (response.headers.get('content-encoding') ?? 'identity') !== 'identity';
  if (!encoded && Number.isFinite(declared) && declared > capBytes) {
    await response.body?.cancel().catch(() => undefined);
    return { bytes: Buffer.alloc(0), overflow: true };
  }
  if (!response.body) return { bytes: Buffer.alloc(0), overflow: false };
  const reader = response.body.getReader();
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > capBytes) {
      await reader.cancel().catch(() => undefined);
      return { bytes: Buffer.concat(chunks), overflow: true };
    }
    chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
  }
  return { bytes: Buffer.concat(chunks), overflow: false };
}

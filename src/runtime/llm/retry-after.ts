/**
 * A provider's Retry-After (delta seconds or an HTTP date) in milliseconds from `nowMs`, when it is readable;
 * `retry-after-ms` (OpenAI's and Azure's milliseconds) wins when present. Past dates read as 0.
 */
export function retryAfterMs(
  headers: { get(name: string): string | null } | undefined,
  nowMs: number,
): number | undefined {
  const ms = headers?.get('retry-after-ms');
  if (ms !== null && ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

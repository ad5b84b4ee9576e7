import { A3sError } from '../../src/client/index.js';

/** A duration in ms as a person reads it: `850 ms`, `4.2 s`, `3 min 5 s`. */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.floor(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** Pretty JSON of a value (strings that hold JSON are parsed first); never throws. */
export function formatJson(value: unknown): string {
  let shown = value;
  if (typeof value === 'string') {
    try {
      shown = JSON.parse(value) as unknown;
    } catch {
      return value;
    }
  }
  try {
    return JSON.stringify(shown, null, 2) ?? String(shown);
  } catch {
    return String(shown);
  }
}

/** A short one-line preview of a value (for summaries). */
export function preview(value: unknown, max = 80): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A local time of an epoch-ms timestamp. */
export function formatTime(ms: number | undefined): string {
  return ms === undefined ? '—' : new Date(ms).toLocaleString();
}

/** The message of any failure, with the server's error code when it has one. */
export function errorText(error: unknown): string {
  if (error instanceof A3sError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

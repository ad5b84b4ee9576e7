/**
 * A JSON-shaped value with every string in it (at any depth, keys untouched) through `redact`: the one rule the
 * outbound channels that can carry prompt data share (hook requests, run webhooks, trace content), applied with
 * the server's secret redactor.
 */
export function redactStrings<T>(value: T, redact: (text: string) => string): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => redactStrings(item, redact)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) out[key] = redactStrings(item, redact);
    return out as T;
  }
  return value;
}

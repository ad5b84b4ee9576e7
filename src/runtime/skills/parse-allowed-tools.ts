/**
 * The grants of `allowed-tools`: a YAML list, a comma list ("read(*), grep(*)") or the legacy space list
 * ("read grep"); spaces inside parentheses ("bash(git status)") never split.
 */
export function parseAllowedTools(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  if (typeof value !== 'string') return value.map((item) => item.trim()).filter(Boolean);
  const separator = value.includes(',') ? /^,$/ : /^[\s,]$/;
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of value) {
    if (char === '(') depth += 1;
    if (char === ')') depth = Math.max(0, depth - 1);
    if (depth === 0 && separator.test(char)) {
      if (current.trim()) out.push(current.trim());
      current = '';
    } else current += char;
  }
  if (current.trim()) out.push(current.trim());
  return out;
}

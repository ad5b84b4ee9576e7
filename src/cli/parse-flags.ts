import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closestName } from './did-you-mean.js';
import { UsageError } from './usage-error.js';

/** The flags of one command, as util.parseArgs takes them. */
export type FlagSpec = NonNullable<ParseArgsConfig['options']>;

/** Flags every command takes: where the server is, its token, and help. */
export const GLOBAL_FLAGS = {
  url: { type: 'string' },
  token: { type: 'string' },
  'no-forward': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies FlagSpec;

/** Parsed flags: each value a string, a boolean or a list of strings (repeatable flags), or absent. */
export type FlagValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** What parseFlags answers: the flags and the positional arguments. */
export interface ParsedFlags {
  values: FlagValues;
  positionals: string[];
}

/**
 * Parse a command's arguments strictly (util.parseArgs): an unknown flag, a missing value or a value given to a
 * boolean flag is a UsageError naming the flag; `--` ends the flags (a prompt may then start with `-`).
 */
export function parseFlags(command: string, args: readonly string[], spec: FlagSpec): ParsedFlags {
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: { ...GLOBAL_FLAGS, ...spec },
      allowPositionals: true,
      strict: true,
    });
    return { values: values as FlagValues, positionals };
  } catch (error) {
    // util.parseArgs messages name the flag ("Unknown option '--x'", "Option '--after <value>' argument missing").
    const message = error instanceof Error ? error.message : String(error);
    throw new UsageError(withSuggestion(message, Object.keys({ ...GLOBAL_FLAGS, ...spec })), command);
  }
}

/**
 * An unknown flag close to a known one (a typo, or a prefix): "Unknown option '--kep' (did you mean --keep?)", in
 * place of util.parseArgs's hint about "--" (which is for a prompt that starts with "-"); any other message as is.
 */
function withSuggestion(message: string, names: readonly string[]): string {
  // Only long flags: "-fix the bug" is more likely a prompt that wants the "--" the original message explains.
  const unknown = /^Unknown option '(--[^'=]+)'/.exec(message)?.[1];
  if (unknown === undefined) return message;
  const name = closestName(unknown.slice(2), names);
  return name === undefined ? message : `Unknown option '${unknown}' (did you mean --${name}?)`;
}

/**
 * Global flags given before the command (`a3s --url U run ...`), moved after it so the command parses them:
 * the arguments from the command on, or the original ones when the first argument is no global flag. Global flags
 * with no command after them are a UsageError naming the flags (never their values: one may be a token).
 */
export function commandFirst(argv: readonly string[]): string[] {
  const leading: string[] = [];
  const names: string[] = [];
  let i = 0;
  while (i < argv.length) {
    const arg = argv[i] ?? '';
    const name = /^--([^=]+)/.exec(arg)?.[1];
    const flag = name !== undefined && name !== 'help' ? GLOBAL_FLAGS[name as keyof typeof GLOBAL_FLAGS] : undefined;
    if (flag === undefined) break;
    const takesValue = flag.type === 'string' && !arg.includes('=');
    leading.push(...argv.slice(i, i + (takesValue ? 2 : 1)));
    names.push(`--${name}`);
    i += takesValue ? 2 : 1;
  }
  if (leading.length === 0) return [...argv];
  if (i >= argv.length) throw new UsageError(`missing the command after ${names.join(' ')}`, '');
  return [argv[i] ?? '', ...leading, ...argv.slice(i + 1)];
}

/** A string flag's value (undefined when absent). */
export function stringFlag(values: FlagValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** A repeatable string flag's values (empty when absent). */
export function stringList(values: FlagValues, name: string): string[] {
  const value = values[name];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
}

/** A boolean flag (false when absent). */
export function booleanFlag(values: FlagValues, name: string): boolean {
  return values[name] === true;
}

/** A non-negative integer flag, or a UsageError naming it. */
export function integerFlag(command: string, values: FlagValues, name: string, min = 0): number | undefined {
  const raw = stringFlag(values, name);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min || !Number.isSafeInteger(Number(raw))) {
    throw new UsageError(`--${name} must be an integer >= ${min}, got "${raw}"`, command);
  }
  return Number(raw);
}

/** Exactly `names.length` positional arguments, or a UsageError naming the missing or extra ones. */
export function positionalArgs(command: string, positionals: readonly string[], names: readonly string[]): string[] {
  if (positionals.length < names.length)
    throw new UsageError(`missing ${names.slice(positionals.length).join(' ')}`, command);
  if (positionals.length > names.length)
    throw new UsageError(`unexpected argument "${positionals[names.length]}"`, command);
  return [...positionals];
}

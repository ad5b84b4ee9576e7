import { parseArgs, type ParseArgsConfig } from 'node:util';
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
    throw new UsageError(error instanceof Error ? error.message : String(error), command);
  }
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

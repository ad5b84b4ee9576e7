/** Flags shared by the benchmarks. */
export interface BenchArgs {
  /** Duration of each timed phase in seconds (`--seconds N`, default 5). */
  seconds: number;
  /** Every `--name value` flag as given, for benchmark-specific options. */
  flags: ReadonlyMap<string, string>;
}

/** Parses `--name value` flags; throws on a stray argument or a bad number. */
export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    const value = argv[i + 1];
    if (!arg.startsWith('--') || value === undefined) throw new Error(`expected --flag value pairs, got ${arg}`);
    flags.set(arg.slice(2), value);
    i += 1;
  }
  return { seconds: numberFlag({ flags, seconds: 0 }, 'seconds', 5), flags };
}

/** A positive number flag, or the default when absent. */
export function numberFlag(args: BenchArgs, name: string, fallback: number): number {
  const raw = args.flags.get(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number, got ${raw}`);
  return value;
}

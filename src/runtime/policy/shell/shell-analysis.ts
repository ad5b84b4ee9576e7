/** One simple command of a shell line, as a permission rule sees it. */
export interface SimpleCommand {
  /** What a `bash(pattern)` rule is matched against: assignments and words, unquoted, joined by single spaces. */
  readonly subject: string;
  /** The unquoted words (assignments first), in order. */
  readonly words: readonly string[];
}

/** A shell line split into its simple commands, with the constructs that can never be auto-allowed. */
export interface ShellAnalysis {
  /** False when the parser could not parse the line (then `commands` may be incomplete). */
  readonly parsed: boolean;
  /** Every simple command the line would run, including those inside substitutions and function bodies. */
  readonly commands: readonly SimpleCommand[];
  /** Why the line needs at least `ask` (substitutions, eval, a shell running a string, a redirect outside the workspace...). */
  readonly hazards: readonly string[];
}

/** The bounds one program runs under; every one has a default and an error that names it. */
export interface ProgramLimits {
  /** Wall-clock budget of the script, counted from when it starts executing. */
  readonly timeoutMs: number;
  /** Most tool calls the script may start (refused calls do not count). */
  readonly maxToolCalls: number;
  /**
   * Bound of each tool output returned to the script (cut on a UTF-8 boundary, as the seed does), and of
   * the collected console output and the script's JSON result (those two never below 1 KiB).
   */
  readonly maxOutputBytes: number;
  /** Heap of the QuickJS runtime. */
  readonly memoryBytes: number;
  /** QuickJS stack; deep recursion past it fails with a stack-limit error. */
  readonly stackBytes: number;
}

/** Defaults of every program limit. */
export const DEFAULT_PROGRAM_LIMITS: ProgramLimits = {
  timeoutMs: 30_000,
  maxToolCalls: 20,
  maxOutputBytes: 64 * 1024,
  memoryBytes: 64 * 1024 * 1024,
  stackBytes: 512 * 1024,
};

/** Default `timeoutMs` of a program allowed to call `task` (child agents take whole LLM turns). */
export const DELEGATING_PROGRAM_TIMEOUT_MS = 600_000;

/** What a command writes to and reads from: the process streams, or a test's stand-ins. */
export interface CliIo {
  /** Answer text, JSON results and NDJSON events; a patch as its bytes. */
  out(text: string | Uint8Array): void;
  /** Tool activity, notes and error lines. */
  err(text: string): void;
  /** True when stderr is a terminal (a progress line instead of plain lines). */
  readonly stderrIsTty: boolean;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The user's home directory (for ~/.config/a3s/cli.json). */
  readonly home: string;
  /** The directory relative paths (--workspace, --policy) resolve against. */
  readonly cwd: string;
  /** True when stdin is a terminal (questions of the agent are asked there). */
  readonly stdinIsTty: boolean;
  /** Read all of standard input (for the prompt `-`). */
  readStdin(): Promise<string>;
  /** Show `prompt` on stderr and read a line of stdin: null when stdin ended, on Ctrl-C, or when `signal` aborts. */
  readLine(prompt: string, signal?: AbortSignal): Promise<string | null>;
  /** Call `handler` on SIGINT until the returned function is called. */
  onInterrupt(handler: () => void): () => void;
}

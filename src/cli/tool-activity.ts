import type { CliIo } from './cli-io.js';

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const SUMMARY_CHARS = 80;
// The argument that says what a call does, for the tools that have one.
const MAIN_ARGUMENT = ['command', 'file_path', 'path', 'pattern', 'url', 'query', 'description'];

/** A short one-line summary of a tool call's arguments (its main argument, else compact JSON), cut to 80 characters. */
export function summarizeArgs(args: unknown): string {
  let text: string;
  const record = typeof args === 'object' && args !== null ? (args as Record<string, unknown>) : undefined;
  const main = record ? MAIN_ARGUMENT.find((key) => typeof record[key] === 'string') : undefined;
  if (record && main) text = String(record[main]);
  else if (args === undefined) text = '';
  else text = JSON.stringify(args) ?? '';
  text = text.replace(/\s+/g, ' ').trim();
  return text.length > SUMMARY_CHARS ? `${text.slice(0, SUMMARY_CHARS - 1)}…` : text;
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * Tool activity on stderr: on a terminal one progress line (a spinner, the running tool and its time) that a
 * finished call replaces with a permanent line; otherwise plain lines, one when a call starts and one when it ends.
 */
export class ToolActivity {
  private readonly running = new Map<string, { name: string; summary: string; startedAt: number }>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private frame = 0;
  private lineShown = false;

  constructor(
    private readonly io: CliIo,
    /** Called before a line is written, so streamed answer text that ended mid-line gets its line break first. */
    private readonly beforeLine: () => void = () => undefined,
  ) {}

  /** A tool call started running. */
  started(id: string, name: string, args: unknown): void {
    const summary = summarizeArgs(args);
    this.running.set(id, { name, summary, startedAt: Date.now() });
    if (this.io.stderrIsTty) {
      this.beforeLine();
      this.draw();
      this.timer ??= setInterval(() => this.draw(), 100);
    } else {
      this.line(`[tool] ${name}${summary ? `: ${summary}` : ''}`);
    }
  }

  /** A tool call ended with its exit code (0 is success) and duration. */
  ended(id: string, name: string, exitCode: number | undefined, durationMs: number | undefined): void {
    const call = this.running.get(id);
    this.running.delete(id);
    const took = seconds(durationMs ?? (call ? Date.now() - call.startedAt : 0));
    const outcome = exitCode === undefined ? took : `exit ${exitCode}, ${took}`;
    if (this.io.stderrIsTty) {
      this.clearLine();
      const mark = exitCode === 0 || exitCode === undefined ? '✓' : '✗';
      this.io.err(`${mark} ${name}${call?.summary ? `: ${call.summary}` : ''} (${outcome})\n`);
      if (this.running.size > 0) this.draw();
      else this.stopTimer();
    } else {
      this.line(`[tool] ${name}: ${outcome}`);
    }
  }

  /** A note about the run (confirmation, denial, error): a plain line, the progress line redrawn after it. */
  note(text: string): void {
    this.line(text);
    if (this.io.stderrIsTty && this.running.size > 0) this.draw();
  }

  /** Remove the progress line before other output goes to the terminal. */
  clearLine(): void {
    if (this.lineShown) {
      this.io.err('\r\x1b[2K');
      this.lineShown = false;
    }
  }

  /** Stop drawing for a while (a question is asked on the terminal); `resume` draws again. */
  pause(): void {
    this.clearLine();
    this.stopTimer();
  }

  /** Draw again after `pause`, while calls are running. */
  resume(): void {
    if (!this.io.stderrIsTty || this.running.size === 0) return;
    this.draw();
    this.timer ??= setInterval(() => this.draw(), 100);
  }

  /** Stop drawing (the run ended). */
  stop(): void {
    this.clearLine();
    this.stopTimer();
    this.running.clear();
  }

  private line(text: string): void {
    this.clearLine();
    this.beforeLine();
    this.io.err(`${text}\n`);
  }

  private draw(): void {
    const calls = [...this.running.values()];
    const first = calls[0];
    if (!first) return;
    this.frame = (this.frame + 1) % SPINNER.length;
    const more = calls.length > 1 ? ` (+${calls.length - 1} more)` : '';
    this.io.err(
      `\r\x1b[2K${SPINNER[this.frame]} ${first.name}${first.summary ? `: ${first.summary}` : ''} ${seconds(Date.now() - first.startedAt)}${more}`,
    );
    this.lineShown = true;
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

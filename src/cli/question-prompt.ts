import type { QuestionReply, Session } from '../client/index.js';
import type { CliIo } from './cli-io.js';
import type { ToolActivity } from './tool-activity.js';

/** What a `user_question` event asks (its payload's fields the CLI uses). */
export interface AskedQuestion {
  question_id: string;
  question: string;
  options: readonly unknown[];
  allow_free_text: boolean;
  timeout_ms?: number;
}

/** A word as a shell reads it: bare when it is plain, else single-quoted. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A timeout in seconds: `30 s`, `0.7 s`. */
function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`;
}

/** The question and its numbered options, as lines. */
function questionLines(asked: AskedQuestion): string[] {
  const options = asked.options.map(String);
  return [`[question] ${asked.question}`, ...options.map((option, i) => `  ${i + 1}. ${option}`)];
}

/**
 * The question on stderr with the exact `a3s answer` command lines to answer it (stdin is no terminal): the
 * caller then exits 3 and the run keeps waiting on the server until the question's timeout.
 */
export function printQuestionCommands(session: Session, runId: string, asked: AskedQuestion, io: CliIo): void {
  const base = `a3s answer ${shellWord(session.sessionId)} ${shellWord(asked.question_id)}`;
  const options = asked.options.map(String);
  const lines = [
    ...questionLines(asked),
    `a3s: the agent asks a question in session ${session.sessionId}, run ${runId} (question id ${asked.question_id})${
      asked.timeout_ms !== undefined ? `; it waits ${seconds(asked.timeout_ms)} for an answer` : ''
    }. Answer with:`,
    ...options.map((option) => `  ${base} --option ${shellWord(option)}`),
    ...(asked.allow_free_text || options.length === 0 ? [`  ${base} "your answer"`] : []),
  ];
  io.err(`${lines.join('\n')}\n`);
}

/** What a line typed at the prompt answers: an option by number, free text, or nothing (ask again). */
export function replyOf(line: string, asked: AskedQuestion): QuestionReply | string[] {
  const options = asked.options.map(String);
  const text = line.trim();
  if (text === '') return ['type an answer'];
  if (/^\d+$/.test(text) && options.length > 0) {
    const n = Number(text);
    if (n >= 1 && n <= options.length) return { option: options[n - 1]! };
    if (!asked.allow_free_text) return [`pick a number from 1 to ${options.length}`];
  }
  if (!asked.allow_free_text && options.length > 0) return [`pick a number from 1 to ${options.length}`];
  return text;
}

/**
 * Ask the question on the terminal and answer it: prints the question and its numbered options, reads a line (a
 * number picks an option, other text answers freely when the question allows it). Past the question's timeout
 * the prompt ends (the run goes on without an answer). Answers false when no line came (stdin ended, or
 * Ctrl-C): the caller decides what then.
 */
export async function askOnTerminal(
  session: Session,
  asked: AskedQuestion,
  io: CliIo,
  activity: ToolActivity,
): Promise<boolean> {
  activity.pause();
  const timeout = new AbortController();
  const timer =
    asked.timeout_ms !== undefined ? setTimeout(() => timeout.abort(), asked.timeout_ms).unref() : undefined;
  try {
    io.err(`${questionLines(asked).join('\n')}\n`);
    const options = asked.options.length;
    const prompt =
      options === 0
        ? 'answer> '
        : asked.allow_free_text
          ? `answer (1-${options} or your own words)> `
          : `pick 1-${options}> `;
    for (;;) {
      const line = await io.readLine(prompt, timeout.signal);
      if (line === null && timeout.signal.aborted) {
        io.err(`\n[question] no answer within ${seconds(asked.timeout_ms ?? 0)}: the run goes on without one\n`);
        return true;
      }
      if (line === null) return false;
      const reply = replyOf(line, asked);
      if (Array.isArray(reply)) {
        io.err(`${reply[0]}\n`);
        continue;
      }
      try {
        await session.answerQuestion(asked.question_id, reply);
        io.err(
          `[question] answered: ${typeof reply === 'string' ? reply : 'option' in reply ? reply.option : 'declined'}\n`,
        );
      } catch (error) {
        io.err(`[question] could not answer: ${error instanceof Error ? error.message : String(error)}\n`);
      }
      return true;
    }
  } finally {
    clearTimeout(timer);
    activity.resume();
  }
}

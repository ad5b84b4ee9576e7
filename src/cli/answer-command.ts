import type { CliIo } from './cli-io.js';
import { resolveCliConfig } from './cli-config.js';
import { connect } from './connect.js';
import { EXIT } from './exit-codes.js';
import { parseFlags, stringFlag, type FlagSpec } from './parse-flags.js';
import { UsageError } from './usage-error.js';

/** The flags of `a3s answer` (besides the global ones). */
export const ANSWER_FLAGS = { option: { type: 'string' }, decline: { type: 'boolean' } } as const satisfies FlagSpec;

/** `a3s answer SESSION QUESTION_ID (--option TEXT | --decline | TEXT...)`: answer a question the agent asked (ask_user). */
export async function answerCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags('answer', args, ANSWER_FLAGS);
  const [sessionId, questionId, ...words] = positionals;
  if (sessionId === undefined || questionId === undefined)
    throw new UsageError(`missing ${sessionId === undefined ? 'SESSION QUESTION_ID' : 'QUESTION_ID'}`, 'answer');
  const option = stringFlag(values, 'option');
  const decline = values.decline === true;
  const text = words.join(' ');
  if ([option !== undefined, decline, words.length > 0].filter(Boolean).length > 1)
    throw new UsageError('give one of --option, --decline or a free-text answer', 'answer');
  if (option === undefined && !decline && text.trim() === '')
    throw new UsageError('missing the answer: --option TEXT (one of the options), --decline or free text', 'answer');
  const client = connect(resolveCliConfig(values, io));
  const session = await client.getSession(sessionId);
  await session.answerQuestion(questionId, option !== undefined ? { option } : decline ? { declined: true } : text);
  io.out(`${decline ? 'declined' : 'answered'} ${questionId} in session ${sessionId}\n`);
  return EXIT.ok;
}

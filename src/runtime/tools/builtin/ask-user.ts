import { z } from 'zod';
import { MAX_QUESTION_CHARS, MAX_QUESTION_OPTIONS } from '../../../protocol/questions.js';
import { defineTool, loadPrompt, toolError, type ToolResult } from '../define-tool.js';

const parameters = z
  .object({
    question: z.string().min(1).max(MAX_QUESTION_CHARS).describe('The question, in one or a few sentences.'),
    options: z
      .array(z.string().min(1).max(MAX_QUESTION_CHARS))
      .max(MAX_QUESTION_OPTIONS)
      .optional()
      .describe(`Choices the user picks from (at most ${MAX_QUESTION_OPTIONS}); omit for a free-text question.`),
    allow_free_text: z
      .boolean()
      .optional()
      .describe('Whether the user may answer in their own words besides the options (default true).'),
  })
  .strict()
  .refine((args) => args.allow_free_text !== false || (args.options?.length ?? 0) > 0, {
    message: 'allow_free_text: false needs options to choose from',
    path: ['allow_free_text'],
  })
  .refine((args) => new Set(args.options ?? []).size === (args.options?.length ?? 0), {
    message: 'options must be distinct',
    path: ['options'],
  });

/** The `ask_user` tool (seed): asks the session's user a question and waits for the answer or its timeout. */
export const askUserTool = defineTool({
  name: 'ask_user',
  description: loadPrompt(import.meta.url, 'ask-user.md'),
  parameters,
  readOnly: true,
  asksUser: true,
  async execute(args, ctx): Promise<ToolResult> {
    if (!ctx.questions)
      return toolError(
        'ask_user is not available here: a delegated run has no user to ask. Decide yourself, or report what you need.',
      );
    const outcome = await ctx.questions.ask({
      question: args.question,
      options: args.options ?? [],
      allowFreeText: args.allow_free_text ?? true,
    });
    switch (outcome.kind) {
      case 'answered':
        return outcome.option !== undefined
          ? { output: `The user chose: ${outcome.option}`, exitCode: 0, metadata: { option: outcome.option } }
          : { output: `The user answered: ${outcome.answer}`, exitCode: 0, metadata: { answer: outcome.answer } };
      case 'declined':
        return {
          output: 'The user declined to answer. Go on without the answer, or say what you need and stop.',
          exitCode: 0,
          metadata: { declined: true },
        };
      case 'timed_out':
        return toolError(`no answer within ${outcome.timeoutMs} ms; nobody answered for the user`, {
          timed_out: true,
        });
      case 'cancelled':
        return toolError('the question was cancelled before anyone answered', { cancelled: true });
    }
  },
});

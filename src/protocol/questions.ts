import { z } from 'zod';

/** Longest question, option and free-text answer, in characters. */
export const MAX_QUESTION_CHARS = 4000;
/** Most options one question offers. */
export const MAX_QUESTION_OPTIONS = 20;

/** Path parameters of POST /v1/sessions/:id/questions/:questionId. */
export const QuestionParamsSchema = z
  .object({ id: z.string().min(1).max(128), questionId: z.string().min(1).max(200) })
  .strict();

/** A question the agent asked the user (the ask_user tool), waiting for an answer. */
export const PendingQuestionSchema = z
  .object({
    questionId: z.string(),
    question: z.string(),
    options: z.array(z.string()),
    allowFreeText: z.boolean(),
    runId: z.string().nullable(),
    toolCallId: z.string(),
    createdAtMs: z.number().int(),
    timeoutMs: z.number().int(),
    remainingMs: z.number().int(),
  })
  .strict()
  .meta({ id: 'PendingQuestion' });

/** A pending question as the wire carries it. */
export type PendingQuestionView = z.infer<typeof PendingQuestionSchema>;

/**
 * The answer to a question: free text (`answer`, when the question allows it), one of its options
 * (`option`, exactly as offered), or `declined: true` (the user will not answer: the ask_user call returns
 * that, and the agent goes on without it). Exactly one of the three.
 */
export const QuestionAnswerSchema = z
  .object({
    answer: z.string().min(1).max(MAX_QUESTION_CHARS).optional(),
    option: z.string().min(1).max(MAX_QUESTION_CHARS).optional(),
    declined: z.literal(true).optional(),
  })
  .strict()
  .refine((body) => [body.answer, body.option, body.declined].filter((given) => given !== undefined).length === 1, {
    message: 'give exactly one of answer (free text), option (one of the offered options) or declined: true',
    path: ['answer'],
  })
  .meta({ id: 'QuestionAnswer' });

/** An answer to a question. */
export type QuestionAnswer = z.infer<typeof QuestionAnswerSchema>;

/** Answer of GET /v1/sessions/:id/questions. */
export const QuestionListResponseSchema = z
  .object({ questions: z.array(PendingQuestionSchema) })
  .meta({ id: 'QuestionListResponse' });

/**
 * A question a durable session's snapshot keeps: one still waiting when the session was saved (its run stopped
 * by a shutdown or lost with its node), with the answer once one came and no run took it yet. A restored session
 * lists it again; the answer resumes the run from its checkpoint, whose ask_user call takes it.
 */
export const StoredQuestionSchema = z
  .object({
    question_id: z.string().min(1).max(200),
    question: z.string().min(1).max(MAX_QUESTION_CHARS),
    options: z.array(z.string().min(1).max(MAX_QUESTION_CHARS)).max(MAX_QUESTION_OPTIONS),
    allow_free_text: z.boolean(),
    run_id: z.string().min(1).max(200).nullable(),
    tool_call_id: z.string().min(1).max(500),
    created_at_ms: z.number().int().nonnegative(),
    timeout_ms: z.number().int().positive(),
    answer: QuestionAnswerSchema.optional(),
  })
  .strict()
  .meta({ id: 'StoredQuestion' });

/** A question kept in a session snapshot. */
export type StoredQuestion = z.infer<typeof StoredQuestionSchema>;

/** Answer of POST /v1/sessions/:id/questions/:questionId: the question it settled and the answer given. */
export const QuestionAnsweredResponseSchema = z
  .object({
    question: PendingQuestionSchema,
    answer: z.string().optional(),
    option: z.string().optional(),
    declined: z.literal(true).optional(),
    /**
     * Set when the question was kept across a restart or takeover: the run the answer resumed (from the
     * asking run's checkpoint; its ask_user call returns the answer).
     */
    resumedRunId: z.string().optional(),
  })
  .strict()
  .meta({ id: 'QuestionAnsweredResponse' });

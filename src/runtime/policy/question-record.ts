import { CodeError } from '../../errors.js';
import type { PendingQuestionView, QuestionAnswer, StoredQuestion } from '../../protocol/questions.js';

/** A question as the broker holds it: the listed view without its remaining time. */
export type QuestionRecord = Omit<PendingQuestionView, 'remainingMs'>;

/** The outcome of a valid answer: one of the options offered, free text where the question allows it, or a decline. */
export type CheckedAnswer =
  { kind: 'answered'; option: string } | { kind: 'answered'; answer: string } | { kind: 'declined' };

/** Check an answer against its question: VALIDATION_ERROR naming body.option or body.answer when it does not fit. */
export function checkQuestionAnswer(view: QuestionRecord, answer: QuestionAnswer): CheckedAnswer {
  const questionId = view.questionId;
  // Any question may be declined: the user says they will not answer.
  if (answer.declined === true) return { kind: 'declined' };
  if (answer.option !== undefined) {
    if (!view.options.includes(answer.option))
      throw new CodeError(
        'VALIDATION_ERROR',
        `body.option: "${answer.option}" is not one of the options of question ${questionId} (${view.options.map((o) => JSON.stringify(o)).join(', ') || 'none'})`,
        { field: 'option', questionId },
      );
    return { kind: 'answered', option: answer.option };
  }
  if (!view.allowFreeText)
    throw new CodeError(
      'VALIDATION_ERROR',
      `body.answer: question ${questionId} takes one of its options, not free text (send option)`,
      { field: 'answer', questionId },
    );
  return { kind: 'answered', answer: answer.answer ?? '' };
}

/** A question as a snapshot keeps it (with the answer held for the run that resumes it). */
export function toStoredQuestion(view: QuestionRecord, answer?: QuestionAnswer): StoredQuestion {
  return {
    question_id: view.questionId,
    question: view.question,
    options: [...view.options],
    allow_free_text: view.allowFreeText,
    run_id: view.runId,
    tool_call_id: view.toolCallId,
    created_at_ms: view.createdAtMs,
    timeout_ms: view.timeoutMs,
    ...(answer ? { answer } : {}),
  };
}

/** The broker's record of a question from a snapshot. */
export function fromStoredQuestion(stored: StoredQuestion): QuestionRecord {
  return {
    questionId: stored.question_id,
    question: stored.question,
    options: [...stored.options],
    allowFreeText: stored.allow_free_text,
    runId: stored.run_id,
    toolCallId: stored.tool_call_id,
    createdAtMs: stored.created_at_ms,
    timeoutMs: stored.timeout_ms,
  };
}

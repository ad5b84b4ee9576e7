import { CodeError } from '../../errors.js';
import type { PendingQuestionView, QuestionAnswer } from '../../protocol/questions.js';
import type { HostEnv } from '../ports/host-env.js';

/** What the agent asks (the ask_user tool's arguments, validated). */
export interface QuestionText {
  question: string;
  options: readonly string[];
  allowFreeText: boolean;
}

/** A question registered with the broker by the tool call that asks it. */
export interface QuestionRequest extends QuestionText {
  runId: string | undefined;
  toolCallId: string;
  timeoutMs: number;
  /** The call's signal: a cancel (run cancel, session close) settles the question unanswered. */
  signal: AbortSignal;
  /** Called once when the question is registered (emits user_question). */
  onAsked(pending: PendingQuestionView): void;
}

/** How a question ended: answered (free text or an option), timed out, or cancelled. */
export type QuestionOutcome =
  | { kind: 'answered'; answer: string; option?: undefined }
  | { kind: 'answered'; option: string; answer?: undefined }
  | { kind: 'timed_out'; timeoutMs: number }
  | { kind: 'cancelled' };

interface Entry {
  view: Omit<PendingQuestionView, 'remainingMs'>;
  settle(outcome: QuestionOutcome): void;
}

const MAX_SETTLED = 10_000;

/**
 * The questions one session's agent asked its user and waits on: each settled exactly once by an answer, its
 * timeout or a cancel. Unknown ids are QUESTION_NOT_FOUND, settled ones QUESTION_SETTLED; an option must be
 * one of those offered, and free text is refused when the question does not allow it.
 */
export class QuestionBroker {
  // Created on first use: most sessions never ask.
  private pending: Map<string, Entry> | undefined;
  private settled: Set<string> | undefined;

  constructor(private readonly hostEnv: HostEnv) {}

  /** Register a question and wait for its outcome. */
  ask(request: QuestionRequest): Promise<QuestionOutcome> {
    if (request.signal.aborted) return Promise.resolve({ kind: 'cancelled' });
    const pending = (this.pending ??= new Map());
    const questionId = this.hostEnv.newId('q');
    return new Promise<QuestionOutcome>((resolve) => {
      const view = {
        questionId,
        question: request.question,
        options: [...request.options],
        allowFreeText: request.allowFreeText,
        runId: request.runId ?? null,
        toolCallId: request.toolCallId,
        createdAtMs: this.hostEnv.now(),
        timeoutMs: request.timeoutMs,
      };
      const finish = (outcome: QuestionOutcome) => {
        if (!pending.has(questionId)) return;
        pending.delete(questionId);
        this.remember(questionId);
        clearTimeout(timer);
        request.signal.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const timer = setTimeout(() => finish({ kind: 'timed_out', timeoutMs: request.timeoutMs }), request.timeoutMs);
      const onAbort = () => finish({ kind: 'cancelled' });
      request.signal.addEventListener('abort', onAbort, { once: true });
      pending.set(questionId, { view, settle: finish });
      request.onAsked({ ...view, remainingMs: request.timeoutMs });
    });
  }

  /** Answer a pending question; answers the question as it was listed. */
  answer(questionId: string, answer: QuestionAnswer): PendingQuestionView {
    const entry = this.pending?.get(questionId);
    if (!entry) {
      if (this.settled?.has(questionId))
        throw new CodeError('QUESTION_SETTLED', `question ${questionId} was already answered, timed out or cancelled`, {
          questionId,
        });
      throw new CodeError('QUESTION_NOT_FOUND', `no pending question ${questionId}`, { questionId });
    }
    const listed = this.view(entry);
    if (answer.option !== undefined) {
      if (!entry.view.options.includes(answer.option))
        throw new CodeError(
          'VALIDATION_ERROR',
          `body.option: "${answer.option}" is not one of the options of question ${questionId} (${entry.view.options.map((o) => JSON.stringify(o)).join(', ') || 'none'})`,
          { field: 'option', questionId },
        );
      entry.settle({ kind: 'answered', option: answer.option });
      return listed;
    }
    if (!entry.view.allowFreeText)
      throw new CodeError(
        'VALIDATION_ERROR',
        `body.answer: question ${questionId} takes one of its options, not free text (send option)`,
        { field: 'answer', questionId },
      );
    entry.settle({ kind: 'answered', answer: answer.answer ?? '' });
    return listed;
  }

  /** Pending questions with their remaining time, oldest first. */
  list(): PendingQuestionView[] {
    return this.pending ? [...this.pending.values()].map((entry) => this.view(entry)) : [];
  }

  /** Settle every pending question unanswered (the session closes): the number settled. */
  cancelAll(): number {
    const entries = this.pending ? [...this.pending.values()] : [];
    for (const entry of entries) entry.settle({ kind: 'cancelled' });
    return entries.length;
  }

  private view(entry: Entry): PendingQuestionView {
    const elapsed = this.hostEnv.now() - entry.view.createdAtMs;
    return {
      ...entry.view,
      options: [...entry.view.options],
      remainingMs: Math.max(0, entry.view.timeoutMs - elapsed),
    };
  }

  private remember(questionId: string): void {
    const settled = (this.settled ??= new Set());
    settled.add(questionId);
    if (settled.size > MAX_SETTLED) {
      const oldest = settled.values().next().value;
      if (oldest !== undefined) settled.delete(oldest);
    }
  }
}

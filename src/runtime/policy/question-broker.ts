import { CodeError } from '../../errors.js';
import type { PendingQuestionView, QuestionAnswer, StoredQuestion } from '../../protocol/questions.js';
import type { HostEnv } from '../ports/host-env.js';
import { checkQuestionAnswer, fromStoredQuestion, toStoredQuestion, type QuestionRecord } from './question-record.js';

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

/** How a question ended: answered (free text or an option), declined by the user, timed out, or cancelled. */
export type QuestionOutcome =
  | { kind: 'answered'; answer: string; option?: undefined }
  | { kind: 'answered'; option: string; answer?: undefined }
  | { kind: 'declined' }
  | { kind: 'timed_out'; timeoutMs: number }
  | { kind: 'cancelled' };

/** What answering settled: the question as listed, and for a kept question the run its answer resumes. */
export interface AnsweredQuestion {
  question: PendingQuestionView;
  /** A kept question's run (stopped by a shutdown, or lost with its node): resume it so its ask_user call takes the answer. */
  resumesRun?: string;
}

interface Entry {
  view: QuestionRecord;
  /** Settle the waiting call; `keep` moves the question to the kept ones (the session stops but is resumed later). */
  settle(outcome: QuestionOutcome, keep?: boolean): void;
}

/** A question kept from a stopped run: listed and answerable; the run that resumes the asking call takes its answer. */
interface Kept {
  view: QuestionRecord;
  answer?: QuestionAnswer;
}

const MAX_SETTLED = 10_000;

/**
 * The questions one session's agent asked its user and waits on: each settled exactly once by an answer, its
 * timeout or a cancel. Unknown ids are QUESTION_NOT_FOUND, settled ones QUESTION_SETTLED; an option must be
 * one of those offered, and free text is refused when the question does not allow it. A durable session keeps
 * the questions its stopped run waited on (`suspendAll`, the snapshot's `pending_questions`): they stay listed,
 * the answer is held for the run that resumes the asking call, and that call gets it (or waits again, for the
 * rest of the question's time, under the same id).
 */
export class QuestionBroker {
  // Created on first use: most sessions never ask.
  private pending: Map<string, Entry> | undefined;
  private kept: Map<string, Kept> | undefined;
  private settled: Set<string> | undefined;

  constructor(
    private readonly hostEnv: HostEnv,
    /** Told when the questions a snapshot keeps change (asked, answered, settled), so a durable session saves. */
    private readonly onChange?: () => void,
  ) {}

  /** Take the questions of a restored session's snapshot. */
  restore(stored: readonly StoredQuestion[]): void {
    if (stored.length === 0) return;
    const kept = (this.kept ??= new Map());
    for (const entry of stored) {
      const view = fromStoredQuestion(entry);
      kept.set(view.questionId, entry.answer ? { view, answer: entry.answer } : { view });
    }
  }

  /** What the session's snapshot keeps: the questions waiting now and the kept ones (answered, or with time left). */
  stored(): StoredQuestion[] {
    const live = this.pending ? [...this.pending.values()].map((entry) => toStoredQuestion(entry.view)) : [];
    const kept = this.kept
      ? [...this.kept.values()]
          .filter((entry) => entry.answer !== undefined || this.remaining(entry.view) > 0)
          .map((entry) => toStoredQuestion(entry.view, entry.answer))
      : [];
    return [...live, ...kept];
  }

  /** Register a question and wait for its outcome (a kept question of the same call answers or waits again). */
  ask(request: QuestionRequest): Promise<QuestionOutcome> {
    if (request.signal.aborted) return Promise.resolve({ kind: 'cancelled' });
    const resumed = this.takeKept(request);
    if (resumed?.answer) {
      this.remember(resumed.view.questionId);
      this.onChange?.();
      return Promise.resolve(outcomeOf(resumed.answer));
    }
    const view: QuestionRecord = resumed
      ? { ...resumed.view, runId: request.runId ?? null }
      : {
          questionId: this.hostEnv.newId('q'),
          question: request.question,
          options: [...request.options],
          allowFreeText: request.allowFreeText,
          runId: request.runId ?? null,
          toolCallId: request.toolCallId,
          createdAtMs: this.hostEnv.now(),
          timeoutMs: request.timeoutMs,
        };
    const remainingMs = this.remaining(view);
    if (remainingMs <= 0) {
      this.remember(view.questionId);
      return Promise.resolve({ kind: 'timed_out', timeoutMs: view.timeoutMs });
    }
    const pending = (this.pending ??= new Map());
    const questionId = view.questionId;
    return new Promise<QuestionOutcome>((resolve) => {
      const finish = (outcome: QuestionOutcome, keep = false) => {
        if (!pending.has(questionId)) return;
        pending.delete(questionId);
        if (keep) (this.kept ??= new Map()).set(questionId, { view });
        else this.remember(questionId);
        clearTimeout(timer);
        request.signal.removeEventListener('abort', onAbort);
        resolve(outcome);
        if (!keep) this.onChange?.();
      };
      const timer = setTimeout(() => finish({ kind: 'timed_out', timeoutMs: view.timeoutMs }), remainingMs);
      const onAbort = () => finish({ kind: 'cancelled' });
      request.signal.addEventListener('abort', onAbort, { once: true });
      pending.set(questionId, { view, settle: finish });
      request.onAsked({ ...view, options: [...view.options], remainingMs });
      this.onChange?.();
    });
  }

  /** Answer a pending (or kept) question; answers the question as it was listed. */
  answer(questionId: string, answer: QuestionAnswer): AnsweredQuestion {
    const entry = this.pending?.get(questionId);
    if (entry) {
      const listed = this.view(entry.view);
      entry.settle(checkQuestionAnswer(entry.view, answer));
      return { question: listed };
    }
    const kept = this.kept?.get(questionId);
    if (kept && kept.answer === undefined && this.remaining(kept.view) > 0) {
      const listed = this.view(kept.view);
      checkQuestionAnswer(kept.view, answer);
      kept.answer = answer;
      this.onChange?.();
      return { question: listed, ...(kept.view.runId !== null ? { resumesRun: kept.view.runId } : {}) };
    }
    if (this.settled?.has(questionId) || kept)
      throw new CodeError('QUESTION_SETTLED', `question ${questionId} was already answered, timed out or cancelled`, {
        questionId,
      });
    throw new CodeError('QUESTION_NOT_FOUND', `no pending question ${questionId}`, { questionId });
  }

  /** Take back the answer held for a kept question whose run could not be resumed: it can be answered again. */
  withdraw(questionId: string): void {
    const kept = this.kept?.get(questionId);
    if (kept?.answer === undefined) return;
    delete kept.answer;
    this.onChange?.();
  }

  /** Pending questions with their remaining time, oldest first (kept ones not answered yet included). */
  list(): PendingQuestionView[] {
    const live = this.pending ? [...this.pending.values()].map((entry) => this.view(entry.view)) : [];
    const kept = this.kept
      ? [...this.kept.values()]
          .filter((entry) => entry.answer === undefined && this.remaining(entry.view) > 0)
          .map((entry) => this.view(entry.view))
      : [];
    return [...kept, ...live];
  }

  /** Settle every pending question unanswered (the session closes): the number settled. */
  cancelAll(): number {
    const entries = this.pending ? [...this.pending.values()] : [];
    for (const entry of entries) entry.settle({ kind: 'cancelled' });
    return entries.length;
  }

  /**
   * The session stops but will be resumed (shutdown, passivation, a lost lease): each waiting call is settled
   * cancelled, and its question is kept (listed, answerable, in the snapshot). The number kept.
   */
  suspendAll(): number {
    const entries = this.pending ? [...this.pending.values()] : [];
    for (const entry of entries) entry.settle({ kind: 'cancelled' }, true);
    return entries.length;
  }

  /** The kept question of this call (same call id and question), removed from the kept ones. */
  private takeKept(request: QuestionRequest): Kept | undefined {
    if (!this.kept) return undefined;
    for (const [id, entry] of this.kept) {
      if (entry.view.toolCallId !== request.toolCallId || entry.view.question !== request.question) continue;
      this.kept.delete(id);
      return entry;
    }
    return undefined;
  }

  private remaining(view: QuestionRecord): number {
    return Math.max(0, view.timeoutMs - (this.hostEnv.now() - view.createdAtMs));
  }

  private view(view: QuestionRecord): PendingQuestionView {
    return { ...view, options: [...view.options], remainingMs: this.remaining(view) };
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

/** The outcome an answer (checked when it was given) makes. */
function outcomeOf(answer: QuestionAnswer): QuestionOutcome {
  return answer.option !== undefined
    ? { kind: 'answered', option: answer.option }
    : { kind: 'answered', answer: answer.answer ?? '' };
}

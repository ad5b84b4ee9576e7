import { CodeError } from '../../errors.js';
import { asAgentEventEnvelope, type AgentEventEnvelope } from '../../protocol/agent-event-envelope.js';
import type { AgentSession } from '../../runtime/session-kernel/agent-session.js';
import type { PendingQuestionView } from '../../protocol/questions.js';
import type { AguiDecision, AguiQuestionDecision } from './agui-run-input.js';

/** Answers this node remembers, so a retried resume (same answer) continues instead of failing as stale. */
const MAX_REMEMBERED = 10_000;

/** Where a resumed stream picks the run up: the run, the confirmation event it resumes after, and what came before. */
export interface AguiResumePoint {
  a3sRunId: string;
  /** session_sequence of the earliest answered confirmation_required event (the stream continues after it). */
  after: number;
  /** The run's events up to and including that one (the mapper learns open steps and tool calls from them). */
  seed: AgentEventEnvelope[];
}

interface Remembered {
  /** The answer, as compared on a retry (`approved=true`, `answer:"…"`, `option:"…"`). */
  answer: string;
  runId: string;
}

function answerKey(decision: AguiDecision): string {
  if (decision.kind === 'confirmation') return decision.cancelled ? 'cancelled' : `approved=${decision.approved}`;
  if (decision.answer.declined) return 'declined';
  return decision.answer.option !== undefined
    ? `option:${JSON.stringify(decision.answer.option)}`
    : `answer:${JSON.stringify(decision.answer.answer)}`;
}

/** A retried entry matches the earlier answer (a question cancelled then is declined: cancelled again matches). */
function sameAnswer(earlier: string, decision: AguiDecision): boolean {
  const key = answerKey(decision);
  return key === earlier || (key === 'cancelled' && (earlier === 'declined' || earlier === 'approved=false'));
}

/** An entry with status "cancelled" for a question interrupt declines it. */
function asQuestion(decision: AguiDecision): AguiDecision {
  if (decision.kind === 'question' || !decision.cancelled) return decision;
  return { kind: 'question', interruptId: decision.interruptId, answer: { declined: true }, field: decision.field };
}

function settled(id: string, message: string, field: string, question: boolean): CodeError {
  return new CodeError(question ? 'QUESTION_SETTLED' : 'CONFIRMATION_SETTLED', `interrupt "${id}" ${message}`, {
    interruptId: id,
    field: `${field}.interruptId`,
  });
}

/** A decision of the wrong kind for its interrupt: a question answered like a confirmation, or the reverse. */
function wrongKind(decision: AguiDecision, isQuestion: boolean): CodeError {
  const id = decision.interruptId;
  const message = isQuestion
    ? `interrupt "${id}" is a question (reason "user_question"): resolve it with payload {answer: text}, {option: one offered} or {declined: true}, or cancel it (status "cancelled" declines it)`
    : `interrupt "${id}" is a tool call confirmation (reason "tool_call"): resolve it with payload {approved: boolean}`;
  return new CodeError('VALIDATION_ERROR', `${decision.field}.payload: ${message}`, {
    field: `${decision.field}.payload`,
    interruptId: id,
  });
}

/**
 * Answers AG-UI resume entries through the session's confirmation broker (tool-call interrupts) and question
 * broker (user_question interrupts). Every entry is checked before any is answered: an interrupt still
 * pending is answered; one this node already answered the same way is accepted again (a retried POST);
 * anything else is stale (answered otherwise, timed out, cancelled: CONFIRMATION_SETTLED / QUESTION_SETTLED)
 * or unknown (CONFIRMATION_NOT_FOUND). All entries must belong to one run.
 */
export class AguiInterruptLedger {
  private readonly answered = new Map<string, Remembered>();

  /**
   * Answer the entries (`mayPassFloor`: the caller holds host_direct, so its "always" may grant past the
   * operator's floor) and say where the stream continues; a stale or unknown entry is returned as its
   * CodeError (anything unexpected as INTERNAL_ERROR, without internals), which the stream reports as RUN_ERROR.
   */
  resume(
    session: AgentSession,
    decisions: readonly AguiDecision[],
    mayPassFloor: boolean,
  ): AguiResumePoint | CodeError {
    try {
      return this.answer(session, decisions, mayPassFloor);
    } catch (error) {
      return error instanceof CodeError
        ? error
        : new CodeError('INTERNAL_ERROR', 'the interrupts could not be answered');
    }
  }

  /** `resume`, throwing CodeError for a stale, unknown or wrongly answered entry. */
  private answer(session: AgentSession, decisions: readonly AguiDecision[], mayPassFloor: boolean): AguiResumePoint {
    const confirmations = new Map(session.governance.pendingConfirmations().map((p) => [p.toolId, p]));
    const questions = new Map(session.governance.pendingQuestions().map((q) => [q.questionId, q]));
    const toAnswer: AguiDecision[] = [];
    let runId: string | undefined;
    for (const given of decisions) {
      const id = given.interruptId;
      const field = given.field;
      const confirmation = confirmations.get(id);
      const question = questions.get(id);
      const decision = question ? asQuestion(given) : given;
      let owner: string | undefined;
      if (confirmation || question) {
        if (decision.kind === 'question' && !question) throw wrongKind(decision, false);
        if (decision.kind === 'confirmation' && !confirmation) throw wrongKind(decision, true);
        if (decision.kind === 'question' && question) checkQuestionAnswer(question, decision);
        const of = confirmation?.runId ?? question?.runId ?? undefined;
        if (of === undefined)
          throw settled(
            id,
            `belongs to no run; answer it with POST /v1/sessions/:id/${question ? 'questions' : 'confirmations'}/${id}`,
            field,
            question !== undefined,
          );
        owner = of;
        toAnswer.push(decision);
      } else {
        const earlier = this.answered.get(this.key(session, id));
        const asked = earlier ? undefined : this.askedKind(session, id);
        if (earlier && sameAnswer(earlier.answer, decision)) owner = earlier.runId;
        else if (earlier)
          throw settled(id, `was already answered (${earlier.answer})`, field, decision.kind === 'question');
        else if (asked !== undefined) {
          const cancelledQuestion = asked === 'question' && decision.kind === 'confirmation' && decision.cancelled;
          if (!cancelledQuestion && (asked === 'question') !== (decision.kind === 'question'))
            throw wrongKind(decision, asked === 'question');
          throw settled(id, 'is no longer pending (answered, timed out or cancelled)', field, asked === 'question');
        } else
          throw new CodeError('CONFIRMATION_NOT_FOUND', `no interrupt "${id}" in this session`, {
            interruptId: id,
            field: `${field}.interruptId`,
          });
      }
      if (runId !== undefined && owner !== runId)
        throw new CodeError(
          'VALIDATION_ERROR',
          `${field}.interruptId: interrupt "${id}" belongs to another run than the entries before it`,
          { field: `${field}.interruptId` },
        );
      runId = owner;
    }
    if (runId === undefined)
      throw new CodeError('VALIDATION_ERROR', 'body.resume: must answer at least one interrupt', {
        field: 'body.resume',
      });
    for (const decision of toAnswer) {
      if (decision.kind === 'question') session.governance.answerQuestion(decision.interruptId, decision.answer);
      else
        session.governance.answerConfirmation(decision.interruptId, {
          approved: decision.approved,
          ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
          ...(decision.always ? { always: true, mayPassFloor } : {}),
        });
      this.remember(session, decision.interruptId, { answer: answerKey(decision), runId });
    }
    return this.resumePoint(
      session,
      runId,
      decisions.map((d) => d.interruptId),
    );
  }

  /** The earliest confirmation or question event among the answered ones, and the run's events up to it. */
  private resumePoint(session: AgentSession, runId: string, ids: readonly string[]): AguiResumePoint {
    const wanted = new Set(ids);
    const events = (session.events.runPage(runId, -1, Number.MAX_SAFE_INTEGER)?.events ?? []).map(asAgentEventEnvelope);
    const at = events.findIndex(
      (e) =>
        (e.type === 'confirmation_required' && wanted.has(e.payload.tool_id)) ||
        (e.type === 'user_question' && wanted.has(e.payload.question_id)),
    );
    if (at < 0) return { a3sRunId: runId, after: session.events.lastSequence, seed: [] };
    const event = events[at]!;
    return { a3sRunId: runId, after: event.metadata.session_sequence, seed: events.slice(0, at + 1) };
  }

  /** Whether the session's retained events asked `id` as a confirmation or a question (undefined: never). */
  private askedKind(session: AgentSession, id: string): 'confirmation' | 'question' | undefined {
    for (const envelope of session.events.read(0, Number.MAX_SAFE_INTEGER)) {
      const e = asAgentEventEnvelope(envelope);
      if (e.type === 'confirmation_required' && e.payload.tool_id === id) return 'confirmation';
      if (e.type === 'user_question' && e.payload.question_id === id) return 'question';
    }
    return undefined;
  }

  private key(session: AgentSession, toolId: string): string {
    return `${session.key}\u0000${toolId}`;
  }

  private remember(session: AgentSession, toolId: string, value: Remembered): void {
    this.answered.set(this.key(session, toolId), value);
    if (this.answered.size > MAX_REMEMBERED) {
      const oldest = this.answered.keys().next().value;
      if (oldest !== undefined) this.answered.delete(oldest);
    }
  }
}

/** The question broker's own checks, made before any entry is answered, naming the entry's payload. */
function checkQuestionAnswer(question: PendingQuestionView, decision: AguiQuestionDecision): void {
  const { option } = decision.answer;
  if (decision.answer.declined) return;
  if (option !== undefined && !question.options.includes(option))
    throw new CodeError(
      'VALIDATION_ERROR',
      `${decision.field}.payload.option: "${option}" is not one of the options of question ${question.questionId} (${question.options.map((o) => JSON.stringify(o)).join(', ') || 'none'})`,
      { field: `${decision.field}.payload.option`, questionId: question.questionId },
    );
  if (option === undefined && !question.allowFreeText)
    throw new CodeError(
      'VALIDATION_ERROR',
      `${decision.field}.payload.answer: question ${question.questionId} takes one of its options, not free text (send option)`,
      { field: `${decision.field}.payload.answer`, questionId: question.questionId },
    );
}

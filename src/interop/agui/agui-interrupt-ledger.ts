import { CodeError } from '../../errors.js';
import { asAgentEventEnvelope, type AgentEventEnvelope } from '../../protocol/agent-event-envelope.js';
import type { AgentSession } from '../../runtime/session-kernel/agent-session.js';
import type { AguiDecision } from './agui-run-input.js';

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
  approved: boolean;
  runId: string;
}

/**
 * Answers AG-UI resume entries through the session's one confirmation broker. Every entry is checked
 * before any is answered: an interrupt still pending is answered; one this node already answered the same
 * way is accepted again (a retried POST); anything else is stale (answered otherwise, timed out,
 * cancelled: CONFIRMATION_SETTLED) or unknown (CONFIRMATION_NOT_FOUND). All entries must belong to one run.
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

  /** `resume`, throwing CodeError for a stale or unknown entry. */
  private answer(session: AgentSession, decisions: readonly AguiDecision[], mayPassFloor: boolean): AguiResumePoint {
    const pending = new Map(session.governance.pendingConfirmations().map((p) => [p.toolId, p]));
    const toAnswer: AguiDecision[] = [];
    let runId: string | undefined;
    for (const decision of decisions) {
      const id = decision.interruptId;
      const open = pending.get(id);
      let owner: string | undefined;
      if (open) {
        if (open.runId === undefined)
          throw new CodeError(
            'CONFIRMATION_SETTLED',
            `interrupt "${id}" belongs to no run; answer it with POST /v1/sessions/:id/confirmations/${id}`,
            { interruptId: id, field: `${decision.field}.interruptId` },
          );
        owner = open.runId;
        toAnswer.push(decision);
      } else {
        const earlier = this.answered.get(this.key(session, id));
        if (earlier && earlier.approved === decision.approved) owner = earlier.runId;
        else if (earlier)
          throw new CodeError(
            'CONFIRMATION_SETTLED',
            `interrupt "${id}" was already answered with approved=${earlier.approved}`,
            { interruptId: id, field: `${decision.field}.interruptId` },
          );
        else if (this.confirmationEvent(session, id))
          throw new CodeError(
            'CONFIRMATION_SETTLED',
            `interrupt "${id}" is no longer pending (answered, timed out or cancelled)`,
            { interruptId: id, field: `${decision.field}.interruptId` },
          );
        else
          throw new CodeError('CONFIRMATION_NOT_FOUND', `no interrupt "${id}" in this session`, {
            interruptId: id,
            field: `${decision.field}.interruptId`,
          });
      }
      if (runId !== undefined && owner !== runId)
        throw new CodeError(
          'VALIDATION_ERROR',
          `${decision.field}.interruptId: interrupt "${id}" belongs to another run than the entries before it`,
          { field: `${decision.field}.interruptId` },
        );
      runId = owner;
    }
    if (runId === undefined)
      throw new CodeError('VALIDATION_ERROR', 'body.resume: must answer at least one interrupt', {
        field: 'body.resume',
      });
    for (const decision of toAnswer) {
      session.governance.answerConfirmation(decision.interruptId, {
        approved: decision.approved,
        ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
        ...(decision.always ? { always: true, mayPassFloor } : {}),
      });
      this.remember(session, decision.interruptId, { approved: decision.approved, runId });
    }
    return this.resumePoint(
      session,
      runId,
      decisions.map((d) => d.interruptId),
    );
  }

  /** The earliest confirmation event among the answered ones, and the run's events up to it. */
  private resumePoint(session: AgentSession, runId: string, ids: readonly string[]): AguiResumePoint {
    const wanted = new Set(ids);
    const events = (session.events.runPage(runId, -1, Number.MAX_SAFE_INTEGER)?.events ?? []).map(asAgentEventEnvelope);
    const at = events.findIndex((e) => e.type === 'confirmation_required' && wanted.has(e.payload.tool_id));
    if (at < 0) return { a3sRunId: runId, after: session.events.lastSequence, seed: [] };
    const event = events[at]!;
    return { a3sRunId: runId, after: event.metadata.session_sequence, seed: events.slice(0, at + 1) };
  }

  private confirmationEvent(session: AgentSession, toolId: string): boolean {
    return session.events.read(0, Number.MAX_SAFE_INTEGER).some((envelope) => {
      const e = asAgentEventEnvelope(envelope);
      return e.type === 'confirmation_required' && e.payload.tool_id === toolId;
    });
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

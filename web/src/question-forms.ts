import type { AgentEvent, Session } from '../../src/client/index.js';
import type { KnownEvent } from '../../src/protocol/agent-event-envelope.js';
import type { PendingQuestionView } from '../../src/protocol/questions.js';
import type { ConsoleContext } from './console-context.js';
import type { EventLog } from './event-log.js';
import { QuestionForm, type QuestionOutcome, type QuestionSpec } from './question-form.js';

/** A user_question event as a QuestionSpec. */
export function fromEvent(event: KnownEvent<'user_question'>): QuestionSpec {
  const p = event.payload;
  return {
    questionId: p.question_id,
    question: p.question,
    options: p.options.filter((option): option is string => typeof option === 'string'),
    allowFreeText: p.allow_free_text,
    runId: event.metadata.run_id ?? null,
    ...(p.tool_call_id !== undefined ? { toolCallId: p.tool_call_id } : {}),
    ...(p.timeout_ms !== undefined ? { deadlineMs: event.metadata.timestamp_ms + p.timeout_ms } : {}),
  };
}

/** A pending question of the list as a QuestionSpec. */
export function fromPending(view: PendingQuestionView): QuestionSpec {
  return {
    questionId: view.questionId,
    question: view.question,
    options: view.options,
    allowFreeText: view.allowFreeText,
    runId: view.runId,
    toolCallId: view.toolCallId,
    deadlineMs: Date.now() + view.remainingMs,
  };
}

/** How the ask_user call's result says the question ended (its tool_end output). */
export function outcomeOf(output: string, exitCode: number): QuestionOutcome {
  if (exitCode === 0 && output.startsWith('The user declined'))
    return { kind: 'ok', text: 'Declined: the agent goes on without an answer.' };
  if (exitCode === 0) return { kind: 'ok', text: output.replace(/^The user (answered|chose): /, 'Answered: ') };
  if (output.startsWith('no answer within')) return { kind: 'warn', text: `Timed out: ${output}` };
  return { kind: 'error', text: `Not answered: ${output}` };
}

/**
 * The session's questions in the transcript: a form for each user_question event (in the slot its run block
 * made) and for each question still pending when the page opened; settled by the answer given here, by the
 * asking call's tool_end (answered elsewhere, timed out) or by its run's end.
 */
export class QuestionForms {
  private readonly forms = new Map<string, QuestionForm>();

  constructor(
    private readonly ctx: ConsoleContext,
    private readonly session: Session,
    private readonly log: EventLog,
  ) {}

  /** The questions pending when the page opened (their events may replay later and move the form into place). */
  async load(): Promise<void> {
    for (const view of await this.session.pendingQuestions()) {
      if (this.forms.has(view.questionId)) continue;
      const form = this.create(fromPending(view));
      this.log.place(view.runId, form.element);
    }
  }

  /** Follow one event the log has shown. */
  onEvent(event: AgentEvent): void {
    switch (event.type) {
      case 'user_question': {
        const spec = fromEvent(event);
        const form = this.forms.get(spec.questionId) ?? this.create(spec);
        const slot = this.log.element.querySelector(
          `.question-slot[data-question-id="${CSS.escape(spec.questionId)}"]`,
        );
        slot?.replaceChildren(form.element);
        break;
      }
      case 'tool_end': {
        const form = [...this.forms.values()].find((f) => f.spec.toolCallId === event.payload.id);
        form?.settle(outcomeOf(event.payload.output, event.payload.exit_code));
        break;
      }
      case 'agent_end':
        for (const form of this.forms.values())
          if (form.spec.runId === event.metadata.run_id)
            form.settle({ kind: 'warn', text: `The run ended (${event.payload.status}) before an answer.` });
        break;
      default:
        break;
    }
  }

  private create(spec: QuestionSpec): QuestionForm {
    const form = new QuestionForm(
      spec,
      async (reply) => {
        await this.session.answerQuestion(spec.questionId, reply);
      },
      (error) => this.ctx.unauthorized(error),
    );
    this.forms.set(spec.questionId, form);
    return form;
  }
}

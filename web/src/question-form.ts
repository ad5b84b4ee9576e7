import {
  QuestionNotFoundError,
  QuestionSettledError,
  UnauthorizedError,
  type QuestionReply,
} from '../../src/client/index.js';
import { el, replaceChildren } from './el.js';
import { errorText, formatDuration } from './format.js';

/** A question of the agent (ask_user) as the form shows it: from a user_question event or the pending list. */
export interface QuestionSpec {
  questionId: string;
  question: string;
  options: string[];
  allowFreeText: boolean;
  runId: string | null;
  toolCallId?: string;
  /** When it times out (epoch ms), when known. */
  deadlineMs?: number;
}

/** How a question ended, as the form says it. */
export type QuestionOutcome = { kind: 'ok' | 'warn' | 'error'; text: string };

/**
 * One question of the agent in the transcript: its text, one button per option, a free-text field when the
 * question allows it, and Decline (the user will not answer; the agent goes on without it). Answering posts
 * once; the form then shows how the question settled and is disabled.
 */
export class QuestionForm {
  readonly element: HTMLFormElement;
  private readonly status: HTMLElement;
  private readonly controls: (HTMLButtonElement | HTMLInputElement)[] = [];
  private done = false;

  constructor(
    readonly spec: QuestionSpec,
    private readonly answer: (reply: QuestionReply) => Promise<void>,
    /** A 401: the app signs out (answers true when it did). */
    private readonly unauthorized: (error: unknown) => boolean,
  ) {
    const options = spec.options.map((option) => {
      const button = el('button', { type: 'button', class: 'btn question-option', 'data-option': option }, option);
      button.addEventListener('click', () => void this.send({ option }, `Answered: ${option}`));
      this.controls.push(button);
      return button;
    });
    const field = spec.allowFreeText
      ? el('input', {
          type: 'text',
          class: 'question-text',
          name: 'answer',
          maxlength: 4000,
          'aria-label': 'Your answer',
          placeholder: spec.options.length > 0 ? 'Or answer in your own words' : 'Your answer',
        })
      : undefined;
    const submit = spec.allowFreeText
      ? el('button', { type: 'submit', class: 'btn btn-primary question-send' }, 'Answer')
      : undefined;
    if (field) this.controls.push(field);
    if (submit) this.controls.push(submit);
    const decline = el('button', { type: 'button', class: 'btn question-decline' }, 'Decline');
    decline.addEventListener(
      'click',
      () => void this.send({ declined: true }, 'Declined: the agent goes on without an answer.'),
    );
    this.controls.push(decline);
    this.status = el('p', { class: 'question-status', role: 'status' });
    const wait =
      spec.deadlineMs !== undefined
        ? ` · waits up to ${formatDuration(Math.max(0, spec.deadlineMs - Date.now()))}`
        : '';
    this.element = el(
      'form',
      { class: 'question', 'data-question-id': spec.questionId, 'aria-label': 'A question of the agent' },
      el('p', { class: 'role' }, 'The agent asks', el('span', { class: 'muted' }, wait)),
      el('p', { class: 'question-text-shown' }, spec.question),
      options.length > 0 ? el('div', { class: 'actions question-options' }, ...options) : null,
      field ? el('div', { class: 'question-free' }, field, submit) : null,
      el('div', { class: 'actions question-decline-row' }, decline),
      this.status,
    );
    this.element.addEventListener('submit', (event) => {
      event.preventDefault();
      const text = field?.value.trim() ?? '';
      if (text === '') {
        this.status.textContent = 'Type an answer first, or pick an option.';
        return;
      }
      void this.send(text, `Answered: ${text}`);
    });
  }

  /** True once the question settled (answered here or elsewhere, timed out, cancelled). */
  get settled(): boolean {
    return this.done;
  }

  /** Show how the question ended and disable the form (a later outcome does not replace the first). */
  settle(outcome: QuestionOutcome): void {
    if (this.done) return;
    this.done = true;
    for (const control of this.controls) control.disabled = true;
    this.element.classList.add('is-settled', `is-${outcome.kind}`);
    replaceChildren(this.status, outcome.text);
  }

  /** Post the reply once; `done` is what the form says once it was taken. */
  private async send(reply: QuestionReply, done: string): Promise<void> {
    if (this.done) return;
    for (const control of this.controls) control.disabled = true;
    this.status.textContent = 'Sending the answer…';
    try {
      await this.answer(reply);
      this.settle({ kind: 'ok', text: done });
    } catch (error) {
      if (error instanceof UnauthorizedError && this.unauthorized(error)) return;
      if (error instanceof QuestionSettledError) {
        this.settle({
          kind: 'warn',
          text: 'Already settled (409 QUESTION_SETTLED): answered by someone else, timed out or cancelled.',
        });
        return;
      }
      if (error instanceof QuestionNotFoundError) {
        this.settle({ kind: 'warn', text: 'This question is no longer known to the server (404).' });
        return;
      }
      for (const control of this.controls) control.disabled = false;
      this.status.textContent = errorText(error);
    }
  }
}

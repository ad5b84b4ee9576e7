import type { PendingQuestionView } from '../protocol/questions.js';
import { seg } from './http-transport.js';
import { sessionPath, type SessionContext } from './session-context.js';

/** What answerQuestion was told: free text, one of the question's options, or a decline (the user will not answer). */
export type QuestionReply = string | { option: string } | { declined: true };

/** A session's questions to its user (the ask_user tool): list the pending ones, answer one. */
export class SessionQuestions {
  constructor(private readonly ctx: SessionContext) {}

  /** Questions the agent asked and waits on, with their remaining time, oldest first. */
  async pendingQuestions(): Promise<PendingQuestionView[]> {
    return (await this.ctx.transport.get<{ questions: PendingQuestionView[] }>(sessionPath(this.ctx, '/questions')))
      .questions;
  }

  /**
   * Answer a question: a string is free text, `{option}` one of its options. Resolves to the question it
   * settled; QuestionNotFoundError, QuestionSettledError or ValidationError (an option not offered) otherwise.
   */
  async answerQuestion(questionId: string, reply: QuestionReply): Promise<PendingQuestionView> {
    const body = typeof reply === 'string' ? { answer: reply } : 'option' in reply ? { option: reply.option } : reply;
    const answered = await this.ctx.transport.post<{ question: PendingQuestionView }>(
      sessionPath(this.ctx, `/questions/${seg(questionId)}`),
      body,
    );
    return answered.question;
  }
}

import type { FastifyInstance } from 'fastify';
import { ErrorBodySchema, SessionParamsSchema } from '../protocol/http.js';
import {
  QuestionAnsweredResponseSchema,
  QuestionAnswerSchema,
  QuestionListResponseSchema,
  QuestionParamsSchema,
} from '../protocol/questions.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

/** Questions to the user (the ask_user tool): list the pending ones, answer one. */
export function registerQuestionRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { agent } = ctx;
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/questions',
      summary: 'Questions the agent asked the user (ask_user) and waits on, with their remaining time',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: QuestionListResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => ({ questions: agent.getSession(params.id, caller).governance.pendingQuestions() }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/questions/:questionId',
      summary: 'Answer a question of the agent {answer} (free text), {option} (one offered) or {declined: true}',
      description:
        "Settles the question once and the ask_user call returns the answer to the model; a question kept across a restart or takeover resumes its run (resumedRunId), whose ask_user call takes the answer. 404 QUESTION_NOT_FOUND for an unknown id (or another session's), 409 QUESTION_SETTLED when already answered, timed out or cancelled, 400 naming body.option for an option that was not offered and body.answer for free text to a question that takes only its options.",
      scope: 'sessions',
      params: QuestionParamsSchema,
      body: QuestionAnswerSchema,
      responses: {
        200: QuestionAnsweredResponseSchema,
        400: ErrorBodySchema,
        404: ErrorBodySchema,
        409: ErrorBodySchema,
      },
    },
    async ({ params, body, caller }) => {
      const { question, resumedRunId } = await agent.answerQuestion(params.id, params.questionId, body, caller);
      return {
        question,
        ...(body.answer !== undefined ? { answer: body.answer } : {}),
        ...(body.option !== undefined ? { option: body.option } : {}),
        ...(body.declined === true ? { declined: true as const } : {}),
        ...(resumedRunId !== undefined ? { resumedRunId } : {}),
      };
    },
  );
}

import type { FastifyInstance } from 'fastify';
import {
  CommandCreatedResponseSchema,
  CommandListResponseSchema,
  CommandParamsSchema,
  CommandRegistrationSchema,
} from '../protocol/commands.js';
import { ErrorBodySchema, SessionParamsSchema } from '../protocol/http.js';
import { assertOutboundUrl, privateOutboundAllowed } from '../runtime/outbound/assert-outbound-url.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

/** Slash command routes: list a session's commands with the built-ins, register one (registerCommand), remove one. */
export function registerCommandRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { agent } = ctx;
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/commands',
      summary: "The session's slash commands (listCommands): built-ins, config commands and those registered live",
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: CommandListResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => ({ commands: agent.getSession(params.id, caller).runs.commands().list() }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/commands',
      summary: 'Register a slash command on a live session (registerCommand); a command of the same name is replaced',
      description:
        'A run whose input is `/name args` then runs the command instead of the model. `template`: rendered with {{args}} {{sessionId}} {{workspace}} {{model}} {{historyLen}} {{totalTokens}} {{toolNames}} {{mcpServers}}; ' +
        '`webhook`: the context is POSTed as JSON and the answer is `{text}`; `websocket`: a host connection of the session answers a `command_request` frame with `command_response {text}`. ' +
        'A built-in name needs `override: true`. Commands registered live are not part of the snapshot.',
      scope: 'sessions',
      params: SessionParamsSchema,
      body: CommandRegistrationSchema,
      responses: { 201: CommandCreatedResponseSchema, 400: ErrorBodySchema, 404: ErrorBodySchema },
    },
    async ({ params, body, caller, reply }) => {
      const commands = agent.getSession(params.id, caller).runs.commands();
      const allowPrivate = privateOutboundAllowed(caller, ctx.config);
      if (body.kind === 'webhook' && body.url !== undefined) await assertOutboundUrl(body.url, 'url', allowPrivate);
      const command = commands.register(body, allowPrivate);
      reply.status(201);
      return { command, commands: commands.list() };
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'DELETE',
      url: '/v1/sessions/:id/commands/:name',
      summary: 'Remove a slash command registered on the session; an unknown name is 404 COMMAND_NOT_FOUND',
      scope: 'sessions',
      params: CommandParamsSchema,
      responses: { 200: CommandListResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => {
      const commands = agent.getSession(params.id, caller).runs.commands();
      commands.remove(params.name);
      return { commands: commands.list() };
    },
  );
}

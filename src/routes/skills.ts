import type { FastifyInstance } from 'fastify';
import { ErrorBodySchema, SessionParamsSchema } from '../protocol/http.js';
import {
  InlineSkillSchema,
  SkillAddedResponseSchema,
  SkillListResponseSchema,
  SkillParamsSchema,
} from '../protocol/skills.js';
import { inlineSkill } from '../runtime/skills/inline-skill.js';
import { skillInfo } from '../runtime/skills/skill-definition.js';
import { tellSkillHooks } from '../runtime/skills/skill-hooks.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

/** Skill routes: list a session's skills, add an inline one (addSkill) and remove one by name (removeSkill). */
export function registerSkillRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { agent } = ctx;
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/skills',
      summary: "The session's skills (skillNames): built-ins, skill_dirs, skillDirs, inlineSkills and those added live",
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: SkillListResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => ({ skills: agent.getSession(params.id, caller).config.skills.list().map(skillInfo) }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/skills',
      summary: 'Add an inline skill to a live session (addSkill); a skill of the same name is replaced',
      description:
        'Instruction and tool skills are searchable with search_skills at once (the session gains the tool when it had no skills). ' +
        'A persona skill added live is listed but does not change the system prompt, which is built when the session is created. ' +
        'Skills added live are not part of the snapshot; a restored session has those of its options.',
      scope: 'sessions',
      params: SessionParamsSchema,
      body: InlineSkillSchema,
      responses: { 201: SkillAddedResponseSchema, 400: ErrorBodySchema, 404: ErrorBodySchema },
    },
    async ({ params, body, caller, reply }) => {
      const session = agent.getSession(params.id, caller);
      const skills = session.config.skills;
      const skill = inlineSkill(body);
      skills.add([skill]);
      // Hooks exist only once the governance was built: an idle session is not built for this.
      tellSkillHooks(session.governance.current?.governance.hooks, 'skill_load', session.id, skill, 'added');
      reply.status(201);
      return { skill: skillInfo(skill), skills: skills.list().map(skillInfo) };
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'DELETE',
      url: '/v1/sessions/:id/skills/:name',
      summary: 'Remove a skill from a live session (removeSkill); an unknown name is 404 SKILL_NOT_FOUND',
      scope: 'sessions',
      params: SkillParamsSchema,
      responses: { 200: SkillListResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => {
      const session = agent.getSession(params.id, caller);
      const skills = session.config.skills;
      const removed = skills.get(params.name);
      skills.remove(params.name);
      if (removed)
        tellSkillHooks(session.governance.current?.governance.hooks, 'skill_unload', session.id, removed, 'removed');
      return { skills: skills.list().map(skillInfo) };
    },
  );
}

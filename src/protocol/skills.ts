import { z } from 'zod';

/** What a skill is: `instruction` (default) and `tool` are searchable, `persona` fills the session's role slot. */
export const SkillKindSchema = z.enum(['instruction', 'persona', 'tool']).meta({ id: 'SkillKind' });

/** A skill kind. */
export type SkillKind = z.infer<typeof SkillKindSchema>;

const allowedTools = z.union([z.string().max(10_000), z.array(z.string().min(1).max(1000)).max(256)]);

/** The YAML front matter of a skill file (unknown keys are kept by the seed; here they are ignored). */
export const SkillFrontMatterSchema = z.looseObject({
  name: z.string().min(1).max(200).optional(),
  description: z.string().max(20_000).optional(),
  'allowed-tools': allowedTools.optional(),
  kind: SkillKindSchema.optional(),
  tags: z.array(z.string().min(1).max(200)).max(64).optional(),
  version: z.union([z.string(), z.number()]).optional(),
  'disable-model-invocation': z.boolean().optional(),
});

/** A seed inline skill (SessionOptions.inlineSkills, body of POST /v1/sessions/:id/skills). */
export const InlineSkillSchema = z
  .object({
    name: z.string().min(1).max(200),
    kind: SkillKindSchema.optional(),
    description: z.string().max(20_000).optional(),
    content: z.string().max(200_000),
    tags: z.array(z.string().min(1).max(200)).max(64).optional(),
    allowedTools: allowedTools.optional(),
    disableModelInvocation: z.boolean().optional(),
  })
  .strict()
  .meta({ id: 'InlineSkill' });

/** A parsed inline skill. */
export type InlineSkill = z.infer<typeof InlineSkillSchema>;

/** One skill as GET /v1/sessions/:id/skills lists it. */
export const SkillInfoSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    kind: SkillKindSchema,
    tags: z.array(z.string()),
    allowed_tools: z.array(z.string()),
    version: z.string().nullable(),
    disable_model_invocation: z.boolean(),
    /** `builtin`, `config` (skill_dirs), `session` (skillDirs) or `inline` (inlineSkills and POST .../skills). */
    source: z.enum(['builtin', 'config', 'session', 'inline']),
  })
  .meta({ id: 'SkillInfo' });

/** A skill in wire form. */
export type SkillInfo = z.infer<typeof SkillInfoSchema>;

/** Answer of GET /v1/sessions/:id/skills and of POST/DELETE on it. */
export const SkillListResponseSchema = z.object({ skills: z.array(SkillInfoSchema) }).meta({ id: 'SkillListResponse' });

/** Path parameters of DELETE /v1/sessions/:id/skills/:name. */
export const SkillParamsSchema = z
  .object({ id: z.string().min(1).max(128), name: z.string().min(1).max(200) })
  .strict();

/** Answer of POST /v1/sessions/:id/skills: the skill added and every skill of the session. */
export const SkillAddedResponseSchema = z
  .object({ skill: SkillInfoSchema, skills: z.array(SkillInfoSchema) })
  .meta({ id: 'SkillAddedResponse' });

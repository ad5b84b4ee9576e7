import { z } from 'zod';
import { DEFAULT_SKILL_SEARCH_LIMIT, MAX_SKILL_SEARCH_LIMIT, scoreSkills } from '../../skills/score-skills.js';
import type { SkillRegistry } from '../../skills/skill-registry.js';
import { defineTool, loadPrompt, type AnyToolDefinition, type ToolResult } from '../define-tool.js';

const object = z
  .object({
    query: z.string().max(10_000).describe('What the task is about, in a few words.'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_SKILL_SEARCH_LIMIT)
      .optional()
      .describe(`How many skills at most (1-${MAX_SKILL_SEARCH_LIMIT}, default ${DEFAULT_SKILL_SEARCH_LIMIT}).`),
  })
  .strict();

/** A string is the query; `q` is an alias of `query`. */
function normalise(input: unknown): unknown {
  if (typeof input === 'string') return { query: input };
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return input;
  const { q, ...rest } = input as Record<string, unknown>;
  return q !== undefined && rest.query === undefined ? { ...rest, query: q } : input;
}

const parameters = z.preprocess(normalise, object);

/** The `search_skills` tool over one session's skills (offered only to sessions that have skills). */
export function createSearchSkillsTool(skills: SkillRegistry): AnyToolDefinition {
  return defineTool({
    name: 'search_skills',
    description: loadPrompt(import.meta.url, 'search-skills.md'),
    parameters,
    jsonSchema: z.toJSONSchema(object, { target: 'draft-7', io: 'input' }) as Record<string, unknown>,
    readOnly: true,
    execute(args): Promise<ToolResult> {
      const found = scoreSkills(skills.discoverable(), args.query, args.limit ?? DEFAULT_SKILL_SEARCH_LIMIT).map(
        (entry) => entry.skill,
      );
      const output =
        found.length === 0
          ? 'No matching skills found. Continue with the core tools.'
          : [
              `Found ${found.length} matching skill(s). Invoke one with Skill using its skill_name.`,
              ...found.map(
                (skill) =>
                  `- ${skill.name} (${skill.kind}): ${skill.description} Allowed tools: ${skill.allowedTools.length > 0 ? skill.allowedTools.join(', ') : 'none'}.`,
              ),
            ].join('\n');
      const metadata = {
        skills: found.map((skill) => ({
          name: skill.name,
          description: skill.description,
          kind: skill.kind,
          tags: [...skill.tags],
          allowed_tools: [...skill.allowedTools],
        })),
      };
      return Promise.resolve({ output, exitCode: 0, metadata });
    },
  });
}

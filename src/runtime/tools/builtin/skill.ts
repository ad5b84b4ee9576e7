import { z } from 'zod';
import { SkillCallParamsSchema } from '../../../protocol/subagent-task.js';
import { defineTool, loadPrompt, type ToolResult } from '../define-tool.js';
import { delegationCall, noDelegation } from './task.js';

/** The seed tolerates `name`/`skillName` for skill_name, `query` for prompt, and arguments nested in `input` or `arguments`. */
function normalise(input: unknown): unknown {
  if (typeof input === 'string') return { skill_name: input };
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return input;
  let record = input as Record<string, unknown>;
  for (const key of ['input', 'arguments']) {
    const inner = record[key];
    if (record.skill_name === undefined && inner !== null && typeof inner === 'object' && !Array.isArray(inner)) {
      const { [key]: _nested, ...rest } = record;
      record = { ...rest, ...(inner as Record<string, unknown>) };
    }
  }
  const { name, skillName, query, ...rest } = record;
  return {
    ...rest,
    ...(rest.skill_name === undefined && (skillName ?? name) !== undefined ? { skill_name: skillName ?? name } : {}),
    ...(rest.prompt === undefined && query !== undefined ? { prompt: query } : {}),
  };
}

/** `Skill`: run one of the session's skills as a child agent limited to the skill's allowed-tools. */
export const skillTool = defineTool({
  name: 'Skill',
  description: loadPrompt(import.meta.url, 'skill.md'),
  parameters: z.preprocess(normalise, SkillCallParamsSchema),
  jsonSchema: z.toJSONSchema(SkillCallParamsSchema, { target: 'draft-7', io: 'input' }) as Record<string, unknown>,
  readOnly: false,
  delegates: true,
  execute(args, ctx): Promise<ToolResult> {
    return ctx.delegation ? ctx.delegation.skill(args, delegationCall(ctx)) : Promise.resolve(noDelegation('Skill'));
  },
});

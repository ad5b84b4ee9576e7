import type { AnyToolDefinition } from './define-tool.js';
import { bashTool } from './builtin/bash.js';
import { batchTool } from './builtin/batch.js';
import { editTool } from './builtin/edit.js';
import { gitTool } from './builtin/git.js';
import { globTool } from './builtin/glob.js';
import { grepTool } from './builtin/grep.js';
import { lsTool } from './builtin/ls.js';
import { patchTool } from './builtin/patch.js';
import { programTool } from './builtin/program.js';
import { readTool } from './builtin/read.js';
import { createSearchSkillsTool } from './builtin/search-skills.js';
import type { SkillRegistry } from '../skills/skill-registry.js';
import { writeTool } from './builtin/write.js';

/** The built-in tools (file reading and editing, search, shell, git and the batch and program orchestrators), in a stable order. */
export function createBuiltinTools(): AnyToolDefinition[] {
  return [readTool, writeTool, editTool, patchTool, grepTool, globTool, lsTool, bashTool, gitTool, batchTool, programTool];
}

/** The session-bound skill tools: `search_skills` over the session's skills (the `Skill` runner lands with delegation). */
export function createSkillTools(skills: SkillRegistry): AnyToolDefinition[] {
  return [createSearchSkillsTool(skills)];
}

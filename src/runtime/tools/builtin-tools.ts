import type { AnyToolDefinition } from './define-tool.js';
import { askUserTool } from './builtin/ask-user.js';
import { bashTool } from './builtin/bash.js';
import { batchTool } from './builtin/batch.js';
import { editTool } from './builtin/edit.js';
import { gitTool } from './builtin/git.js';
import { globTool } from './builtin/glob.js';
import { grepTool } from './builtin/grep.js';
import { lsTool } from './builtin/ls.js';
import { parallelTaskTool } from './builtin/parallel-task.js';
import { patchTool } from './builtin/patch.js';
import { programTool } from './builtin/program.js';
import { readTool } from './builtin/read.js';
import { createSearchSkillsTool } from './builtin/search-skills.js';
import { skillTool } from './builtin/skill.js';
import { taskTool } from './builtin/task.js';
import { webFetchTool } from './builtin/web-fetch.js';
import { webSearchTool } from './builtin/web-search.js';
import type { SkillRegistry } from '../skills/skill-registry.js';
import { writeTool } from './builtin/write.js';

/** The built-in tools (file reading and editing, search, shell, git, the batch and program orchestrators, delegation, the web tools and ask_user), in a stable order. */
export function createBuiltinTools(): AnyToolDefinition[] {
  return [
    readTool,
    writeTool,
    editTool,
    patchTool,
    grepTool,
    globTool,
    lsTool,
    bashTool,
    gitTool,
    batchTool,
    programTool,
    taskTool,
    parallelTaskTool,
    webFetchTool,
    webSearchTool,
    askUserTool,
  ];
}

/** The skill tools of a session that has skills: `search_skills` over them and the `Skill` runner. */
export function createSkillTools(skills: SkillRegistry): AnyToolDefinition[] {
  return [createSearchSkillsTool(skills), skillTool];
}

import { readdir, stat } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool, loadPrompt, toolError, type ToolResult } from '../define-tool.js';
import { pathErrorResult } from '../tool-file-helpers.js';
import { relativeToWorkspace, resolveInWorkspace } from '../workspace-path.js';

// A directory with more entries than this is listed partially, to bound output and memory.
const MAX_ENTRIES = 2000;

const parameters = z
  .object({
    path: z.string().min(1).optional().describe('Directory to list, relative to the workspace (default: the workspace).'),
  })
  .strict();

/** The `ls` tool: sorted entries of one workspace directory, directories suffixed with `/`. */
export const lsTool = defineTool({
  name: 'ls',
  description: loadPrompt(import.meta.url, 'ls.md'),
  parameters,
  readOnly: true,
  async execute(args, ctx): Promise<ToolResult> {
    const userPath = args.path ?? '.';
    try {
      const dir = await resolveInWorkspace(ctx.workspace, userPath, { mustExist: true });
      if (!(await stat(dir)).isDirectory()) return toolError(`${userPath} is not a directory; use read to see a file.`, { reason: 'not_a_directory' });
      const entries = await readdir(dir, { withFileTypes: true });
      const names = entries.map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name)).sort();
      const shown = names.slice(0, MAX_ENTRIES);
      const lines = shown.length > 0 ? shown : ['(empty directory)'];
      if (names.length > MAX_ENTRIES) lines.push(`(${names.length - MAX_ENTRIES} more entries not shown; use glob to narrow down.)`);
      return {
        output: lines.join('\n'),
        exitCode: 0,
        metadata: { path: relativeToWorkspace(ctx.workspace, dir), entries: names.length, truncated: names.length > MAX_ENTRIES },
      };
    } catch (error) {
      return pathErrorResult(error, userPath, 'Directory');
    }
  },
});

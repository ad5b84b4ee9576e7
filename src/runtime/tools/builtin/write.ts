import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, loadPrompt, toolError } from '../define-tool.js';
import { errnoCode, pathErrorResult } from '../tool-file-helpers.js';
import { relativeToWorkspace, resolveInWorkspace } from '../workspace-path.js';

const parameters = z
  .object({
    file_path: z.string().min(1).describe('Path of the file to write, relative to the workspace (or absolute inside it).'),
    content: z.string().describe('The complete content to write to the file.'),
  })
  .strict();

/** The `write` tool: create or overwrite a workspace file, creating parent directories. */
export const writeTool = defineTool({
  name: 'write',
  description: loadPrompt(import.meta.url, 'write.md'),
  parameters,
  readOnly: false,
  async execute(args, ctx) {
    try {
      const absPath = await resolveInWorkspace(ctx.workspace, args.file_path);
      let created = true;
      try {
        const stats = await stat(absPath);
        if (stats.isDirectory()) return toolError(`${args.file_path} is a directory; give the path of a file.`, { reason: 'is_directory' });
        created = false;
      } catch (error) {
        if (errnoCode(error) !== 'ENOENT') throw error;
      }
      await mkdir(path.dirname(absPath), { recursive: true });
      await writeFile(absPath, args.content, 'utf8');
      const bytes = Buffer.byteLength(args.content, 'utf8');
      const shown = relativeToWorkspace(ctx.workspace, absPath);
      return { output: `Wrote ${bytes} bytes to ${shown}`, exitCode: 0, metadata: { path: shown, bytes, created } };
    } catch (error) {
      return pathErrorResult(error, args.file_path);
    }
  },
});

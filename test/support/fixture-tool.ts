import { z } from 'zod';
import { createBuiltinTools } from '../../src/runtime/tools/builtin-tools.js';
import {
  defineTool,
  loadPrompt,
  type AnyToolDefinition,
  type ToolResult,
} from '../../src/runtime/tools/define-tool.js';

const parameters = z.object({ text: z.string().min(1).max(200).describe('The text to echo back.') }).strict();

/**
 * A fixture tool written as a built-in is (`src/runtime/tools/builtin/<name>.ts`, its model-facing text in
 * `<name>.md` beside it): the test of the generated docs adds it to the built-in list and looks for it.
 */
export const fixtureEchoTool = defineTool({
  name: 'fixture_echo',
  description: loadPrompt(import.meta.url, 'fixture-tool.md'),
  parameters,
  readOnly: true,
  async execute(args): Promise<ToolResult> {
    return { output: args.text, exitCode: 0 };
  },
});

/** The built-in tools with the fixture added, as the one line in `src/runtime/tools/builtin-tools.ts` adds a tool. */
export function builtinToolsWithFixture(): AnyToolDefinition[] {
  return [...createBuiltinTools(), fixtureEchoTool];
}

import { WebSearchParamsSchema } from '../../../protocol/web-tools.js';
import { runWebSearch } from '../../web/run-web-search.js';
import { defineTool, loadPrompt, toolError, type ToolResult } from '../define-tool.js';

/**
 * The `web_search` tool: a query to the search backends of config web.search (SearXNG, Brave, Tavily);
 * see runWebSearch. Always listed; without a backend every call answers a tool error naming the config keys.
 */
export const webSearchTool = defineTool({
  name: 'web_search',
  description: loadPrompt(import.meta.url, 'web-search.md'),
  parameters: WebSearchParamsSchema,
  readOnly: false,
  async execute(args, ctx): Promise<ToolResult> {
    if (!ctx.web)
      return toolError('web_search is not available in this context (no web access was given to the call).', {
        reason: 'no_web_access',
      });
    return runWebSearch(ctx.web, args, ctx.signal);
  },
});

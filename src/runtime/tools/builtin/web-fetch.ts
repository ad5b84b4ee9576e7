import { WebFetchParamsSchema } from '../../../protocol/web-tools.js';
import { fetchWebPage } from '../../web/fetch-web-page.js';
import { defineTool, loadPrompt, toolError, type ToolResult } from '../define-tool.js';

/**
 * The `web_fetch` tool: one page of a URL's content (HTML as markdown, text or html), fetched from the
 * server's process through the outbound address check; see fetchWebPage. Not read-only for policy: it
 * reaches the network, so the built-in default policy asks for it.
 */
export const webFetchTool = defineTool({
  name: 'web_fetch',
  description: loadPrompt(import.meta.url, 'web-fetch.md'),
  parameters: WebFetchParamsSchema,
  readOnly: false,
  async execute(args, ctx): Promise<ToolResult> {
    if (!ctx.web)
      return toolError('web_fetch is not available in this context (no web access was given to the call).', {
        reason: 'no_web_access',
      });
    return fetchWebPage(ctx.web, args, ctx.signal);
  },
});

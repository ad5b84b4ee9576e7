import type { CommandContext } from '../../protocol/commands.js';

/**
 * Render a template command: `{{args}} {{sessionId}} {{workspace}} {{model}} {{historyLen}} {{totalTokens}}
 * {{totalCost}} {{toolNames}} {{mcpServers}}` (lists joined with ", "; spaces inside the braces allowed). An unknown
 * `{{name}}` stays as written, so a template can show braces; values are inserted once, never re-rendered.
 */
export function renderCommandTemplate(template: string, ctx: CommandContext): string {
  return template.replace(/\{\{\s*([A-Za-z]+)\s*\}\}/g, (whole, key: string) => {
    switch (key) {
      case 'args':
        return ctx.args;
      case 'sessionId':
        return ctx.sessionId;
      case 'workspace':
        return ctx.workspace;
      case 'model':
        return ctx.model;
      case 'historyLen':
        return String(ctx.historyLen);
      case 'totalTokens':
        return String(ctx.totalTokens);
      case 'totalCost':
        return String(ctx.totalCost);
      case 'toolNames':
        return ctx.toolNames.join(', ');
      case 'mcpServers':
        return ctx.mcpServers.join(', ');
      default:
        return whole;
    }
  });
}

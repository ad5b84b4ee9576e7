import type { McpServerStatus } from '../../protocol/mcp.js';
import type { AnyToolDefinition } from '../tools/define-tool.js';
import type { McpManager } from './mcp-manager.js';

/**
 * The MCP tools a session sees, from its ordered layers (global, inherited..., session): a later
 * layer's tool shadows an earlier one of the same name (case-insensitive, like the tool registry).
 * It is pure recomputation, so removing a local server reveals the shadowed tools again.
 */
export function layerMcpTools(layers: readonly McpManager[]): AnyToolDefinition[] {
  const byName = new Map<string, AnyToolDefinition>();
  for (const layer of layers) {
    for (const tool of layer.tools()) {
      const key = tool.name.toLowerCase();
      // Delete first so the shadowing tool takes the position of its layer, not of the shadowed one.
      byName.delete(key);
      byName.set(key, tool);
    }
  }
  return [...byName.values()];
}

/** The state of every server visible through the ordered layers, each marked with its source. */
export function layerMcpStatus(layers: readonly McpManager[]): McpServerStatus[] {
  return layers.flatMap((layer) => layer.status());
}

import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import type { ToolResult } from '../tools/define-tool.js';

/** What `Client.callTool` resolves to: a current result, or the legacy `{toolResult}` shape. */
export type McpCallResult = CallToolResult | { toolResult?: unknown; [key: string]: unknown };

/** Decoded size of base64 data. */
function base64Bytes(data: string): number {
  return Buffer.byteLength(data, 'base64');
}

/** One content block as text the model can read; binary content is summarised, never inlined. */
export function describeContentBlock(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
      return `[image: ${block.mimeType}, ${base64Bytes(block.data)} bytes]`;
    case 'audio':
      return `[audio: ${block.mimeType}, ${base64Bytes(block.data)} bytes]`;
    case 'resource': {
      const { resource } = block;
      const mime = resource.mimeType ? ` (${resource.mimeType})` : '';
      if ('text' in resource) return `[resource: ${resource.uri}${mime}]\n${resource.text}`;
      return `[resource: ${resource.uri}${mime}, ${base64Bytes(resource.blob)} bytes]`;
    }
    case 'resource_link':
      return `[resource link: ${block.name} <${block.uri}>]`;
    default:
      return `[${(block as { type: string }).type} content]`;
  }
}

/** Map an MCP tools/call result to a ToolResult: text joined, other content summarised, isError -> exit code 1. */
export function mapCallToolResult(server: string, tool: string, result: McpCallResult): ToolResult {
  const metadata: Record<string, unknown> = { mcp_server: server, mcp_tool: tool };
  const content = Array.isArray(result.content) ? (result.content as ContentBlock[]) : undefined;
  let output: string;
  if (content && content.length > 0) {
    output = content.map(describeContentBlock).join('\n');
  } else if (result.structuredContent !== undefined) {
    output = JSON.stringify(result.structuredContent);
  } else if ('toolResult' in result && result.toolResult !== undefined) {
    output = typeof result.toolResult === 'string' ? result.toolResult : JSON.stringify(result.toolResult);
  } else {
    output = '(no output)';
  }
  if (result.isError === true) {
    metadata.is_error = true;
    return { output, exitCode: 1, metadata };
  }
  return { output, exitCode: 0, metadata };
}

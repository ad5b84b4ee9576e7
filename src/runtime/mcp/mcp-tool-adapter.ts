import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { AnyToolDefinition } from '../tools/define-tool.js';
import type { McpConnection } from './mcp-connection.js';
import { mcpCallPaths, mcpPathArguments } from './mcp-path-arguments.js';

/** Longest tool name providers accept for a function (OpenAI: 64). */
export const MAX_TOOL_NAME_CHARS = 64;

/** Arguments of an MCP tool: any object; the server validates against its own schema. */
const anyObject = z.record(z.string(), z.unknown());

/** The model-facing name of a server's tool: `mcp__<server>__<tool>`, characters outside [A-Za-z0-9_-] as "_". */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/** The result of adapting one server's tool list. */
export interface AdaptedTools {
  readonly tools: AnyToolDefinition[];
  /** Why tools were left out (name too long, duplicate after sanitising). */
  readonly skipped: string[];
}

/** Turn a server's listed tools into tool definitions whose calls go through the connection. */
export function adaptMcpTools(connection: McpConnection, listed: readonly Tool[]): AdaptedTools {
  const tools: AnyToolDefinition[] = [];
  const skipped: string[] = [];
  const seen = new Set<string>();
  for (const tool of listed) {
    const name = mcpToolName(connection.name, tool.name);
    if (name.length > MAX_TOOL_NAME_CHARS) {
      skipped.push(`${tool.name}: ${name} is longer than ${MAX_TOOL_NAME_CHARS} characters`);
      continue;
    }
    if (seen.has(name.toLowerCase())) {
      skipped.push(`${tool.name}: ${name} is already taken by another tool of the server`);
      continue;
    }
    seen.add(name.toLowerCase());
    tools.push(adaptMcpTool(connection, tool, name));
  }
  return { tools, skipped };
}

/** One MCP tool as a tool definition: its schema is the server's, shown to the model as given. */
export function adaptMcpTool(
  connection: McpConnection,
  tool: Tool,
  name = mcpToolName(connection.name, tool.name),
): AnyToolDefinition {
  const remoteName = tool.name;
  const pathArguments = mcpPathArguments(tool.inputSchema);
  return {
    name,
    description: tool.description ?? tool.title ?? `Tool ${remoteName} of the MCP server ${connection.name}.`,
    parameters: anyObject,
    jsonSchema: structuredClone(tool.inputSchema) as Record<string, unknown>,
    readOnly: tool.annotations?.readOnlyHint === true,
    ...(pathArguments.length > 0
      ? { permissionPaths: (args: Record<string, unknown>) => mcpCallPaths(pathArguments, args) }
      : {}),
    execute: (args: Record<string, unknown>, ctx) => connection.callTool(remoteName, args, { signal: ctx.signal }),
  };
}

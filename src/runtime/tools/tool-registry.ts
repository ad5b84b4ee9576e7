import { z } from 'zod';
import type { AnyToolDefinition } from './define-tool.js';
import type { LlmToolSpec } from '../llm/llm-provider.js';

const specCache = new WeakMap<AnyToolDefinition, LlmToolSpec>();

/** The JSON-schema form of a tool as the model and `GET .../tools` see it (computed once per tool). */
export function toolSpec(tool: AnyToolDefinition): LlmToolSpec {
  let spec = specCache.get(tool);
  if (!spec) {
    const full =
      tool.jsonSchema ??
      (z.toJSONSchema(tool.parameters, { target: 'draft-7', io: 'input' }) as Record<string, unknown>);
    const { $schema: _dialect, ...parameters } = full;
    spec = { name: tool.name, description: tool.description, parameters };
    specCache.set(tool, spec);
  }
  return spec;
}

/** One entry of `GET /v1/sessions/:id/tools` (ToolInfo) and of openapi.yaml's `x-builtin-tools`: the spec and the read-only flag. */
export function toolListEntry(tool: AnyToolDefinition): LlmToolSpec & { readOnly: boolean } {
  return { ...toolSpec(tool), readOnly: tool.readOnly };
}

/** The tools one session can use, by name (case-insensitive lookup). */
export class ToolRegistry {
  private readonly byName = new Map<string, AnyToolDefinition>();

  constructor(tools: readonly AnyToolDefinition[]) {
    for (const tool of tools) this.byName.set(tool.name.toLowerCase(), tool);
  }

  /** The tool with this name, if any. */
  get(name: string): AnyToolDefinition | undefined {
    return this.byName.get(name.toLowerCase());
  }

  /** Every tool, in registration order. */
  list(): AnyToolDefinition[] {
    return [...this.byName.values()];
  }

  /** Tool specs for the provider request. */
  specs(): LlmToolSpec[] {
    return this.list().map(toolSpec);
  }
}

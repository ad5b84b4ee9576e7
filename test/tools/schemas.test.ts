import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createBuiltinTools } from '../../src/runtime/tools/builtin-tools.js';

// Snapshots of what the model sees: a failing snapshot means a tool's parameters changed, so review
// the change and update deliberately (`npx vitest run test/tools -u`).
describe('built-in tools', () => {
  const tools = createBuiltinTools();

  it('are the built-ins with unique names, prose descriptions and strict schemas', () => {
    expect(tools.map((tool) => tool.name)).toEqual([
      'read',
      'write',
      'edit',
      'patch',
      'grep',
      'glob',
      'ls',
      'bash',
      'git',
      'batch',
      'program',
      'task',
      'parallel_task',
      'web_fetch',
      'web_search',
      'ask_user',
    ]);
    for (const tool of tools) {
      expect(tool.description.length, tool.name).toBeGreaterThan(50);
      expect(() => tool.parameters.parse({ unexpected_field: true }), tool.name).toThrow();
    }
    expect(tools.filter((tool) => tool.readOnly).map((tool) => tool.name)).toEqual([
      'read',
      'grep',
      'glob',
      'ls',
      'ask_user',
    ]);
    // Read-only per call (readOnlyFor): git status yes, checkout no; edit only with dry_run.
    expect(tools.filter((tool) => tool.readOnlyFor !== undefined).map((tool) => tool.name)).toEqual(['edit', 'git']);
  });

  it.each(createBuiltinTools().map((tool) => [tool.name, tool] as const))(
    '%s parameter schema is unchanged',
    (_name, tool) => {
      // Same conversion as the tool registry uses for provider requests.
      const schema = z.toJSONSchema(tool.parameters, { target: 'draft-7', io: 'input' });
      expect(schema).toMatchSnapshot();
      expect(JSON.stringify(schema)).not.toContain('"description":""');
    },
  );
});

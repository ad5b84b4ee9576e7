import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.js';
import { loadConfig } from '../../src/config/load-config.js';

describe('delegation configuration', () => {
  it('reads max_parallel_tasks, the delegation block and limits.max_terminal_subagent_tasks in the seed spelling, with defaults', async () => {
    const defaults = await loadConfig({ env: {}, cwd: '/tmp', configText: 'default_model = "openai/gpt-4o"' });
    expect(defaults.maxParallelTasks).toBeUndefined();
    expect(defaults.delegation).toEqual({
      maxDepth: 3,
      confirmationInheritance: 'inherit_parent',
      keepFinishedChildren: 8,
    });
    expect(defaults.limits.maxTerminalSubagentTasks).toBe(100);
    const text = [
      'max_parallel_tasks = 4',
      'delegation {',
      '  max_depth = 2',
      '  confirmation_inheritance = "deny_on_ask"',
      '  keep_finished_children = 0',
      '}',
      'limits {',
      '  max_terminal_subagent_tasks = 5',
      '}',
    ].join('\n');
    const config = await loadConfig({ env: {}, cwd: '/tmp', configText: text });
    expect(config.maxParallelTasks).toBe(4);
    expect(config.delegation).toEqual({ maxDepth: 2, confirmationInheritance: 'deny_on_ask', keepFinishedChildren: 0 });
    expect(config.limits.maxTerminalSubagentTasks).toBe(5);
  });

  it('names the field of a bad value', async () => {
    await expect(
      loadConfig({ env: {}, cwd: '/tmp', configText: 'delegation {\n  confirmation_inheritance = "always"\n}' }),
    ).rejects.toThrow(ConfigError);
    await expect(
      loadConfig({ env: {}, cwd: '/tmp', configText: 'delegation {\n  confirmation_inheritance = "always"\n}' }),
    ).rejects.toThrow(/:2: delegation\.confirmationInheritance/);
    await expect(loadConfig({ env: {}, cwd: '/tmp', configText: 'max_parallel_tasks = 64' })).rejects.toThrow(
      /max_parallel_tasks/,
    );
  });
});

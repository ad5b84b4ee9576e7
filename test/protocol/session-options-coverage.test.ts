import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionOptionsSchema } from '../../src/protocol/session-options.js';
import {
  UNSUPPORTED_OPTION_REASONS,
  UNSUPPORTED_SESSION_OPTIONS,
} from '../../src/protocol/unsupported-session-options.js';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * Every SessionOptions field this server acts on, with the HTTP-level test that shows its effect. A field the
 * schema gains must be added here (with its test) or to UNSUPPORTED_SESSION_OPTIONS with a reason.
 */
export const SESSION_OPTION_EFFECT_TESTS: Readonly<Record<string, string>> = {
  sessionId: 'test/server/tenant-session-ids.test.ts',
  resume: 'test/server/session-options.test.ts',
  autoResume: 'test/server/cluster.test.ts',
  askUser: 'test/server/ask-user.test.ts',
  model: 'test/server/session-option-effects.test.ts',
  workspace: 'test/server/tenant-workspaces.test.ts',
  autoSave: 'test/server/end-to-end.test.ts',
  sessionStore: 'test/server/session-options.test.ts',
  securityProvider: 'test/server/session-options.test.ts',
  maxToolRounds: 'test/server/loop-limits.test.ts',
  maxParseRetries: 'test/server/loop-limits.test.ts',
  toolTimeoutMs: 'test/server/loop-tools.test.ts',
  circuitBreakerThreshold: 'test/server/loop-limits.test.ts',
  duplicateToolCallThreshold: 'test/server/continuation.test.ts',
  continuationEnabled: 'test/server/continuation.test.ts',
  maxContinuationTurns: 'test/server/continuation.test.ts',
  maxExecutionTimeMs: 'test/server/loop-limits.test.ts',
  temperature: 'test/server/session-option-effects.test.ts',
  role: 'test/server/session-option-effects.test.ts',
  guidelines: 'test/server/session-option-effects.test.ts',
  responseStyle: 'test/server/session-option-effects.test.ts',
  extra: 'test/server/session-option-effects.test.ts',
  tenantId: 'test/server/session-option-effects.test.ts',
  principal: 'test/server/session-option-effects.test.ts',
  agentTemplateId: 'test/server/session-option-effects.test.ts',
  correlationId: 'test/server/session-option-effects.test.ts',
  retentionLimits: 'test/server/session-options.test.ts',
  artifactStoreLimits: 'test/server/session-option-effects.test.ts',
  hostEnv: 'test/server/replay.test.ts',
  permissionPolicy: 'test/server/policy-floor.test.ts',
  confirmationPolicy: 'test/server/policy-floor.test.ts',
  budget: 'test/server/hooks-budget.test.ts',
  budgetHost: 'test/server/hooks-budget.test.ts',
  hooks: 'test/server/hooks-budget.test.ts',
  mcpServers: 'test/server/mcp.test.ts',
  enforceActiveSkillToolRestrictions: 'test/skills/active-skill-restriction-http.test.ts',
  workerAgents: 'test/server/worker-agents.test.ts',
  projectDocFallbackFilenames: 'test/security/agents-md-override.test.ts',
  maxParallelTasks: 'test/server/parallel-task-slots.test.ts',
  agent: 'test/server/agents.test.ts',
  builtinSkills: 'test/server/skills.test.ts',
  skillDirs: 'test/server/skills.test.ts',
  inlineSkills: 'test/server/skills.test.ts',
  agentDirs: 'test/server/agents.test.ts',
  memoryStore: 'test/server/memory.test.ts',
  queueConfig: 'test/server/queue-generate-control.test.ts',
  planningMode: 'test/server/planning.test.ts',
  planning: 'test/server/planning.test.ts',
  goalTracking: 'test/server/planning.test.ts',
  autoCompact: 'test/server/compaction.test.ts',
  autoCompactThreshold: 'test/server/session-option-effects.test.ts',
  maxContextTokens: 'test/server/compaction.test.ts',
  commandEnv: 'test/server/sandbox-tenants.test.ts',
  sandboxNetwork: 'test/server/sandbox-tenants.test.ts',
  webhook: 'test/webhooks/run-webhooks.test.ts',
};

const fields = Object.keys(SessionOptionsSchema.shape);

describe('every SessionOptions field is shown to work or refused with a reason', () => {
  it.each(fields)('%s', (field) => {
    const unsupported = field in UNSUPPORTED_SESSION_OPTIONS;
    const test = SESSION_OPTION_EFFECT_TESTS[field];
    expect(unsupported && test !== undefined, `${field}: both unsupported and mapped to ${test}`).toBe(false);
    if (unsupported) {
      expect(UNSUPPORTED_OPTION_REASONS[field]?.trim(), `${field}: unsupported without a reason`).toBeTruthy();
      return;
    }
    expect(
      test,
      `${field}: neither in UNSUPPORTED_SESSION_OPTIONS nor mapped to the test showing its effect`,
    ).toBeDefined();
    const path = join(ROOT, test ?? '');
    expect(existsSync(path), `${field}: ${test} does not exist`).toBe(true);
    expect(readFileSync(path, 'utf8'), `${field}: ${test} does not mention it`).toMatch(new RegExp(`\\b${field}\\b`));
  });

  it('maps and refuses only fields the schema has', () => {
    const known = new Set(fields);
    expect(Object.keys(SESSION_OPTION_EFFECT_TESTS).filter((name) => !known.has(name))).toEqual([]);
    const top = Object.keys(UNSUPPORTED_SESSION_OPTIONS).map((name) => name.split('.')[0]);
    expect(top.filter((name) => !known.has(name))).toEqual([]);
    for (const name of Object.keys(UNSUPPORTED_OPTION_REASONS))
      expect(name in UNSUPPORTED_SESSION_OPTIONS, `a reason for ${name}, which is not refused`).toBe(true);
  });
});

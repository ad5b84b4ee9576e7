import { readFileSync } from 'node:fs';
import type { AgentDefinition } from './agent-definition.js';
import { READ_ONLY_AGENT_POLICY } from './read-only-agent-policy.js';

const prompt = (name: string) => readFileSync(new URL(`./prompts/${name}.md`, import.meta.url), 'utf8').trim();

/** The seed's built-in agents: general and verification keep the session's policy; explore, plan and review are read-only. */
export const BUILTIN_AGENTS: readonly AgentDefinition[] = [
  {
    name: 'general',
    description: 'General-purpose agent for multi-step coding tasks: investigates, changes and checks code.',
    mode: 'general',
    prompt: prompt('general'),
    source: 'builtin',
    readOnly: false,
  },
  {
    name: 'explore',
    description:
      'Fast read-only agent for exploring a codebase: finds files, searches code and answers questions about it.',
    mode: 'explore',
    prompt: prompt('explore'),
    permissions: READ_ONLY_AGENT_POLICY,
    source: 'builtin',
    readOnly: true,
  },
  {
    name: 'plan',
    description: 'Read-only planning agent: studies the code and writes a step-by-step implementation plan.',
    mode: 'planning',
    prompt: prompt('plan'),
    permissions: READ_ONLY_AGENT_POLICY,
    source: 'builtin',
    readOnly: true,
  },
  {
    name: 'verification',
    description: 'Verification agent: builds, runs the tests and checks that the work does what it claims.',
    mode: 'verification',
    prompt: prompt('verification'),
    source: 'builtin',
    readOnly: false,
  },
  {
    name: 'review',
    description: 'Read-only code review agent: reports bugs, security problems and missing tests in the changes.',
    mode: 'code_review',
    prompt: prompt('review'),
    permissions: READ_ONLY_AGENT_POLICY,
    source: 'builtin',
    readOnly: true,
  },
];

/** True when a name is one of the built-in agents (definitions may not redefine them). */
export function isBuiltinAgent(name: string): boolean {
  return BUILTIN_AGENTS.some((agent) => agent.name === name);
}

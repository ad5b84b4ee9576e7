import type { SessionOptionsInput } from '../../src/client/index.js';

/** A named policy a session can be created with from the console. */
export interface PolicyPreset {
  id: string;
  label: string;
  description: string;
  /** The SessionOptions fields the preset sets (none for the server default). */
  options: Pick<SessionOptionsInput, 'permissionPolicy' | 'confirmationPolicy'>;
}

const READS = ['read', 'glob', 'grep', 'ls'];

/** How long a person has to answer a confirmation the console asks for (10 minutes). */
export const CONSOLE_CONFIRMATION_TIMEOUT_MS = 600_000;

/** The console's policy presets, in the order the form lists them. */
export const POLICY_PRESETS: readonly PolicyPreset[] = [
  {
    id: 'server-default',
    label: 'Server default',
    description: "The operator's default policy (no permissionPolicy sent).",
    options: {},
  },
  {
    id: 'ask-before-changes',
    label: 'Ask before changes',
    description: 'Reads (read, glob, grep, ls) run; every other tool call waits for your approval here.',
    options: {
      permissionPolicy: { allow: READS, ask: [], deny: [], defaultDecision: 'ask' },
      confirmationPolicy: { enabled: true, defaultTimeoutMs: CONSOLE_CONFIRMATION_TIMEOUT_MS, timeoutAction: 'reject' },
    },
  },
  {
    id: 'read-only',
    label: 'Read only',
    description: 'Reads run; write, edit, patch, bash and anything else are denied.',
    options: {
      permissionPolicy: { allow: READS, ask: [], deny: ['write', 'edit', 'patch', 'bash'], defaultDecision: 'deny' },
    },
  },
];

/** The preset with an id (the server default for an unknown one). */
export function presetById(id: string): PolicyPreset {
  return POLICY_PRESETS.find((preset) => preset.id === id) ?? POLICY_PRESETS[0];
}

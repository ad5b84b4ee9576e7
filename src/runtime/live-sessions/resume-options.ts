import { isDeepStrictEqual } from 'node:util';
import { CodeError } from '../../errors.js';
import { SESSION_OPTION_NAMES, type SessionOptions } from '../../protocol/session-options.js';

/** What a stored (or live) session was created with, as `resume: true` compares it. */
export interface StoredSessionOptions {
  readonly options: SessionOptions;
  /** The canonical workspace the session runs in. */
  readonly workspace: string;
  /** The `provider/model` the session runs on. */
  readonly model: string;
}

/** How `resume: true` treats a given option (docs/session-options.md "Resuming a session"). */
export type ResumeRule = 'identity' | 'label' | 'fixed' | 'list' | 'value';

/**
 * The rule of each option that is not `value` (equal: nothing; the stored session has none: it adds; else a
 * conflict). `identity`: names the session, never compared. `label`: relabels (principal, agentTemplateId,
 * correlationId). `fixed`: what the session is (its workspace, model, store, replay clock, agent), so any other
 * value than the one in effect is a conflict, even where the creator gave none. `list`: adds the entries the stored
 * list lacks; leaving one out is a conflict.
 */
export const RESUME_RULES: Readonly<Partial<Record<keyof SessionOptions, ResumeRule>>> = {
  sessionId: 'identity',
  resume: 'identity',
  tenantId: 'identity',
  principal: 'label',
  agentTemplateId: 'label',
  correlationId: 'label',
  workspace: 'fixed',
  model: 'fixed',
  sessionStore: 'fixed',
  hostEnv: 'fixed',
  agent: 'fixed',
  hooks: 'list',
  mcpServers: 'list',
  skillDirs: 'list',
  inlineSkills: 'list',
  agentDirs: 'list',
};

/** The rule `resume: true` applies to an option. */
export function resumeRule(name: string): ResumeRule {
  return RESUME_RULES[name as keyof SessionOptions] ?? 'value';
}

/** What a resume's options change: what they add (checked, then applied) and the fields that conflict. */
export interface ResumeChanges {
  readonly additions: Partial<SessionOptions>;
  readonly conflicts: string[];
}

/** The value of a `fixed` option in effect in the stored session (what an absent one means there). */
function fixedInEffect(name: string, stored: StoredSessionOptions): unknown[] {
  const options = stored.options as Record<string, unknown>;
  switch (name) {
    case 'workspace':
      return [stored.workspace, options.workspace];
    case 'model':
      return [stored.model, options.model];
    case 'sessionStore':
      return [options.sessionStore ?? { type: 'file' }];
    default:
      return [options[name]];
  }
}

/**
 * Compare a resume's options with the stored session's, option by option (RESUME_RULES). Adding is only ever an
 * option the stored session did not set, or list entries it did not have.
 */
export function resumeChanges(stored: StoredSessionOptions, given: SessionOptions): ResumeChanges {
  const additions: Record<string, unknown> = {};
  const conflicts: string[] = [];
  const before = stored.options as Record<string, unknown>;
  for (const name of SESSION_OPTION_NAMES) {
    const value = (given as Record<string, unknown>)[name];
    if (value === undefined) continue;
    const rule = resumeRule(name);
    if (rule === 'identity' || rule === 'label') continue;
    const old = before[name];
    if (rule === 'fixed') {
      if (!fixedInEffect(name, stored).some((current) => isDeepStrictEqual(current, value))) conflicts.push(name);
      continue;
    }
    if (old === undefined) {
      additions[name] = value;
      continue;
    }
    if (isDeepStrictEqual(old, value)) continue;
    if (rule === 'list' && Array.isArray(old) && Array.isArray(value)) {
      const kept = old.every((entry) => value.some((next) => isDeepStrictEqual(entry, next)));
      if (kept) {
        additions[name] = value;
        continue;
      }
    }
    conflicts.push(name);
  }
  return { additions: additions as Partial<SessionOptions>, conflicts };
}

/** SESSION_CONFIGURATION_ERROR (400) naming every option of a resume that conflicts with the stored session's. */
export function resumeConflictError(sessionId: string, conflicts: readonly string[]): CodeError {
  const list = conflicts.join(', ');
  return new CodeError(
    'SESSION_CONFIGURATION_ERROR',
    `${list}: resume: true of session ${sessionId} gives ${conflicts.length === 1 ? 'a value' : 'values'} other than the stored session's; omit ${conflicts.length === 1 ? 'it' : 'them'} (or send the stored value) to resume, or create a new session (docs/session-options.md "Resuming a session")`,
    { field: conflicts[0], fields: [...conflicts], sessionId },
  );
}

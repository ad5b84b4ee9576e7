import type { GovernanceHooks } from '../policy/session-governance.js';
import type { SkillDefinition } from './skill-definition.js';

/** Why a skill was loaded or unloaded: a `Skill` tool call (activated, then done), or the host adding or removing it. */
export type SkillHookTrigger = 'skill_tool' | 'added' | 'removed';

/**
 * Tell skill_load or skill_unload hooks about a skill (nothing is built when no hook listens). The payload:
 * `{session_id, skill_name, skill_kind, source, trigger, ...extra}` (`kind` is the event's name on webhooks); `source` is where the skill came from
 * (builtin, config, session or inline); a `skill` matcher matches `skill_name`.
 */
export function tellSkillHooks(
  hooks: GovernanceHooks | undefined,
  event: 'skill_load' | 'skill_unload',
  sessionId: string,
  skill: SkillDefinition,
  trigger: SkillHookTrigger,
  extra?: Record<string, unknown>,
): void {
  if (!hooks?.wants(event)) return;
  hooks.observe(
    event,
    { session_id: sessionId, skill_name: skill.name, skill_kind: skill.kind, source: skill.source, trigger, ...extra },
    { sessionId, skill: skill.name },
  );
}

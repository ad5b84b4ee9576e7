import type { InlineSkill } from '../../protocol/skills.js';
import { resolveWorkspaceAgentDir } from '../agent-definitions/resolve-workspace-agent-dir.js';
import { openConfiguredDirectory, withHeldDirectory } from '../workspace/held-directory.js';
import type { WorkspaceAccess } from '../workspace/workspace-directory.js';
import { builtinSkills } from './builtin-skills.js';
import { inlineSkill } from './inline-skill.js';
import { loadSkillDir } from './load-skill-dir.js';
import { SkillRegistry } from './skill-registry.js';

/** What a session's skills are resolved from. */
export interface SessionSkillsRequest {
  /** The operator's `skill_dirs` (trusted; relative to the server's working directory; a missing one is a warning). */
  readonly configDirs: readonly string[];
  /** The session's `skillDirs` (each must resolve inside the workspace). */
  readonly sessionDirs: readonly string[];
  readonly inline: readonly InlineSkill[];
  readonly builtin: boolean;
  /** The session's pinned workspace (session directories are opened from it). */
  readonly workspace: WorkspaceAccess;
}

/** A session's skills and notes for initWarning. */
export interface SessionSkills {
  readonly registry: SkillRegistry;
  readonly warnings: string[];
}

/**
 * Build a session's skills, later sources replacing earlier names: the built-ins (when asked for), the
 * operator's skill_dirs (a bad file is SESSION_INITIALIZATION_ERROR naming it), the session's skillDirs and
 * inlineSkills (SESSION_CONFIGURATION_ERROR naming `skillDirs[i]` or the file and field).
 */
export async function resolveSessionSkills(request: SessionSkillsRequest): Promise<SessionSkills> {
  const registry = new SkillRegistry();
  const warnings: string[] = [];
  if (request.builtin) registry.add(builtinSkills());
  for (const dir of request.configDirs) {
    const held = await openConfiguredDirectory(dir);
    if (held === undefined) {
      warnings.push(`skill_dirs: "${dir}" does not exist`);
      continue;
    }
    registry.add(
      await withHeldDirectory(held, (root) =>
        loadSkillDir({ root, label: dir, source: 'config', errorCode: 'SESSION_INITIALIZATION_ERROR' }),
      ),
    );
  }
  for (const [index, dir] of request.sessionDirs.entries()) {
    const held = resolveWorkspaceAgentDir(request.workspace, dir, `skillDirs[${index}]`, 'SESSION_CONFIGURATION_ERROR');
    registry.add(
      await withHeldDirectory(held, (root) =>
        loadSkillDir({ root, label: dir, source: 'session', errorCode: 'SESSION_CONFIGURATION_ERROR' }),
      ),
    );
  }
  registry.add(request.inline.map(inlineSkill));
  return { registry, warnings };
}

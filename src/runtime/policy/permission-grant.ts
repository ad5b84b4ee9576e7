import { argumentString, evaluatePermission, type PermissionContext } from './permission-policy.js';
import type { PermissionPolicy } from '../../protocol/governance.js';
import { analyzeShellCommand } from './shell/analyze-shell-command.js';

/** What an "allow always" answer grants and whether the answerer's rights let it: the key and the floor's say. */
export interface PermissionGrantRequest {
  /** The tool and its permission subject (for bash, the parsed simple commands); equal keys are the same grant. */
  readonly key: string;
  /** True when the operator's policy (the floor) does not allow this call by itself: only host_direct callers may grant it. */
  readonly floorAsks: boolean;
}

/**
 * The key of a session-scoped "allow always" grant: the tool name and its permission subject (the argument a
 * rule matches, see argumentString). For bash it is the list of parsed simple commands, so the same commands
 * written differently match; a line with a hazard (substitution, eval, a redirect outside the workspace...) or
 * one that does not parse is keyed by its exact text.
 */
export function permissionGrantKey(toolName: string, args: unknown, context: PermissionContext = {}): string {
  const tool = toolName.toLowerCase();
  const subject = argumentString(toolName, args);
  if (tool !== 'bash') {
    // A path tool's grant is for the places it reaches (so `./a` and `a` are one grant); a JSON-form tool's for its exact arguments.
    const subjects = context.subjects;
    if (subjects === undefined || subjects.json || !subjects.hasPaths) return `${tool}\u0000${subject}`;
    return `${tool}\u0000paths\u0000${JSON.stringify(subjects.paths.map((path) => path.allowGroups[0][0]))}`;
  }
  const analysis = analyzeShellCommand(subject, context.workspace);
  if (!analysis.parsed || analysis.hazards.length > 0 || analysis.commands.length === 0)
    return `bash\u0000line\u0000${subject}`;
  return `bash\u0000commands\u0000${JSON.stringify(analysis.commands.map((c) => c.subject))}`;
}

/**
 * The key a grant had before tools declared their permission paths (snapshots of 2026-12-02): the tool name and
 * the seed's argument string. Only read, to keep those grants working; bash keys did not change.
 */
export function legacyPermissionGrantKey(toolName: string, args: unknown): string {
  return `${toolName.toLowerCase()}\u0000${argumentString(toolName, args)}`;
}

/** The grant an "allow always" answer to this call would add; `floor` is the operator's policy the session runs under, if any. */
export function permissionGrantRequest(
  toolName: string,
  args: unknown,
  floor: PermissionPolicy | undefined,
  context: PermissionContext = {},
): PermissionGrantRequest {
  const floorAsks = floor !== undefined && evaluatePermission(floor, toolName, args, context).decision !== 'allow';
  return { key: permissionGrantKey(toolName, args, context), floorAsks };
}

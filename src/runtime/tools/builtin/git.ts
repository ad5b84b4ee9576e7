import type { WorkspaceFiles } from '../../workspace/workspace-files.js';
import { defineTool, loadPrompt, toolError, type ToolResult } from '../define-tool.js';
import {
  gitBranch,
  gitCheckout,
  gitDiff,
  gitLog,
  gitRemote,
  gitStash,
  gitStatus,
  gitWorktree,
} from './git-commands.js';
import { gitParameters, isGitReadOnly, type GitArgs } from './git-params.js';
import { GitProcess } from './git-process.js';

function dispatch(git: GitProcess, args: GitArgs, files: WorkspaceFiles): Promise<ToolResult> {
  switch (args.command) {
    case 'status':
      return gitStatus(git);
    case 'log':
      return gitLog(git, args);
    case 'branch':
      return gitBranch(git, args);
    case 'checkout':
      return gitCheckout(git, args);
    case 'diff':
      return gitDiff(git, args);
    case 'stash':
      return gitStash(git, args);
    case 'remote':
      return gitRemote(git, args);
    case 'worktree':
      return gitWorktree(git, args, files);
  }
}

/** The worktree path a git call creates or removes (its default included), for permission rules; other calls name none. */
function gitPermissionPaths(args: GitArgs): { path: string }[] {
  if (args.command !== 'worktree' || (args.subcommand ?? 'list') === 'list') return [];
  if (args.path !== undefined) return [{ path: args.path }];
  return args.name === undefined ? [] : [{ path: `.worktrees/${args.name.replace(/[^A-Za-z0-9._-]+/g, '-')}` }];
}

/**
 * The `git` tool: the seed's status, log, branch, checkout, diff, stash, remote and worktree with typed
 * arguments (no free-form flags, no shell). Read-only per call: see `isGitReadOnly`.
 */
export const gitTool = defineTool({
  name: 'git',
  permissionPaths: gitPermissionPaths,
  description: loadPrompt(import.meta.url, 'git.md'),
  parameters: gitParameters,
  readOnly: false,
  readOnlyFor: isGitReadOnly,
  async execute(args, ctx): Promise<ToolResult> {
    if (ctx.signal.aborted) return toolError('git was cancelled.', { reason: 'cancelled' });
    const git = new GitProcess(ctx.workspace, ctx.signal, ctx.commands);
    const probe = await git.run(['rev-parse', '--is-inside-work-tree']);
    if (probe.cancelled) return toolError('git was cancelled.', { reason: 'cancelled' });
    if (probe.spawnError) return toolError(`Could not run git: ${probe.spawnError}`, { reason: 'spawn_failed' });
    if (probe.code !== 0 || probe.stdout.trim() !== 'true')
      return toolError(`Not a git repository: ${ctx.workspace}`, { reason: 'not_a_repository' });
    const result = await dispatch(git, args, ctx.files);
    return ctx.signal.aborted ? toolError('git was cancelled.', { reason: 'cancelled' }) : result;
  },
});

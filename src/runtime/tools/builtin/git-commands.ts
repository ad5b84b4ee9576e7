import path from 'node:path';
import { canonicalName, type CanonicalName } from '../../workspace/canonical-name.js';
import { WorkspacePathNotFoundError } from '../../workspace/workspace-errors.js';
import type { WorkspaceFiles } from '../../workspace/workspace-files.js';
import { toolError, type ToolResult } from '../define-tool.js';
import { existingPathErrorResult, listPageMetadata, pathErrorResult } from '../tool-file-helpers.js';
import { diffPage, pageOf, pageRequest, sanitizeRemoteUrl, type PageRequest } from './git-paging.js';
import { DEFAULT_GIT_LIST_LIMIT, DEFAULT_GIT_LOG_LIMIT, type GitArgs } from './git-params.js';
import { failureText, type GitProcess } from './git-process.js';

/** Most commits a log cursor may skip (the seed's bound on history scans). */
export const MAX_GIT_LOG_SCAN = 5000;

const ok = (output: string, metadata?: Record<string, unknown>): ToolResult =>
  metadata ? { output, exitCode: 0, metadata } : { output, exitCode: 0 };

async function lines(git: GitProcess, args: string[], what: string): Promise<string[] | ToolResult> {
  const run = await git.run(args);
  if (run.code !== 0) return toolError(`Failed to ${what}: ${failureText(run)}`);
  return run.stdout.split('\n').filter((line) => line.length > 0);
}

async function verifyRef(git: GitProcess, ref: string, what: string): Promise<ToolResult | undefined> {
  const run = await git.run(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]);
  return run.code === 0
    ? undefined
    : toolError(`Failed to ${what}: unknown revision ${JSON.stringify(ref)}`, { reason: 'unknown_ref' });
}

async function validBranchName(git: GitProcess, name: string): Promise<ToolResult | undefined> {
  const run = await git.run(['check-ref-format', '--branch', name]);
  return run.code === 0
    ? undefined
    : toolError(`Invalid branch name ${JSON.stringify(name)}.`, { reason: 'invalid_branch_name' });
}

/** `git status`: the seed's Workspace/Branch/Commit/Status/Worktree block. */
export async function gitStatus(git: GitProcess): Promise<ToolResult> {
  const run = await git.run(['status', '--porcelain=v2', '--branch', '-z', '--untracked-files=normal']);
  if (run.code !== 0) return toolError(`Failed to get status: ${failureText(run)}`);
  let branch = 'HEAD';
  let commit = '(none)';
  let dirty = 0;
  const records = run.stdout.split('\0');
  for (let i = 0; i < records.length; i++) {
    const record = records[i];
    if (record.startsWith('# branch.head ')) branch = record.slice(14);
    else if (record.startsWith('# branch.oid '))
      commit = record.slice(13) === '(initial)' ? '(none)' : record.slice(13, 20);
    else if (record.length > 0 && !record.startsWith('#')) {
      dirty++;
      // A rename or copy record is followed by its original path.
      if (record.startsWith('2 ')) i++;
    }
  }
  const dirs = await git.run(['rev-parse', '--path-format=absolute', '--git-dir', '--git-common-dir']);
  const [gitDir, commonDir] = dirs.stdout.trim().split('\n');
  const isWorktree = dirs.code === 0 && gitDir !== commonDir;
  const status = dirty > 0 ? `${dirty} uncommitted change(s)` : 'clean';
  const output = [
    `Workspace: ${git.workspace}`,
    `Branch:    ${branch}`,
    `Commit:    ${commit}`,
    `Status:    ${status}`,
    `Worktree:  ${isWorktree ? 'yes (linked)' : 'no (main)'}`,
  ].join('\n');
  return ok(output, { branch, is_worktree: isWorktree, dirty_count: dirty, is_dirty: dirty > 0 });
}

/** `git log`: one page of commits, newest first. */
export async function gitLog(git: GitProcess, args: GitArgs): Promise<ToolResult> {
  const request = pageRequest(args, DEFAULT_GIT_LOG_LIMIT);
  if (typeof request === 'string') return toolError(request, { reason: 'invalid_cursor' });
  if (request.offset > MAX_GIT_LOG_SCAN)
    return toolError(`cursor exceeds the maximum log scan of ${MAX_GIT_LOG_SCAN} entries`, {
      reason: 'invalid_cursor',
    });
  const head = await git.run(['rev-parse', '--verify', '--quiet', 'HEAD']);
  if (head.code !== 0) return ok('No commits found.');
  const listed = await lines(
    git,
    [
      'log',
      '--no-decorate',
      '--no-ext-diff',
      '--no-textconv',
      '--date=iso-strict',
      '--format=%H%x1f%an%x1f%ad%x1f%s',
      `--skip=${request.offset}`,
      `--max-count=${request.limit + 1}`,
      'HEAD',
      '--',
    ],
    'get log',
  );
  if (!Array.isArray(listed)) return listed;
  if (listed.length === 0 && request.offset > 0)
    return toolError(`cursor offset ${request.offset} exceeds available commit history`, { reason: 'invalid_cursor' });
  const hasMore = listed.length > request.limit;
  const commits = listed.slice(0, request.limit).map((line) => line.split('\x1f'));
  const end = request.offset + commits.length;
  const entries = commits.map(
    ([id, author, date, subject]) => `${id.slice(0, 7)} - ${author} (${date})\n  ${subject ?? ''}`,
  );
  const more = hasMore ? `\n\nMore commits available; continue with cursor=${end}` : '';
  return ok(`Commit log (${commits.length} entries from offset ${request.offset}):\n\n${entries.join('\n\n')}${more}`, {
    count: commits.length,
    page: listPageMetadata(request, commits.length, hasMore ? String(end) : null, hasMore ? null : end),
  });
}

function listPage<T>(
  all: readonly T[],
  request: PageRequest,
  title: string,
  noun: string,
  format: (item: T) => string,
): ToolResult {
  const page = pageOf(all, request);
  if (typeof page === 'string') return toolError(page, { reason: 'invalid_cursor' });
  const more = page.nextCursor === null ? '' : `\nMore ${noun} available; continue with cursor=${page.nextCursor}`;
  return ok(`${title}\n${page.items.map(format).join('\n')}${more}`, { page: page.metadata });
}

/** `git branch`: list local branches, or create `name` from `base` (default HEAD). */
export async function gitBranch(git: GitProcess, args: GitArgs): Promise<ToolResult> {
  if (args.name !== undefined) {
    const base = args.base ?? 'HEAD';
    const refused = (await validBranchName(git, args.name)) ?? (await verifyRef(git, base, 'create branch'));
    if (refused) return refused;
    const run = await git.run(['branch', '--no-track', args.name, base]);
    if (run.code !== 0) return toolError(`Failed to create branch: ${failureText(run)}`);
    return ok(`Created branch: ${args.name} (based on ${base})`, { branch: args.name, base });
  }
  const request = pageRequest(args, DEFAULT_GIT_LIST_LIMIT);
  if (typeof request === 'string') return toolError(request, { reason: 'invalid_cursor' });
  const listed = await lines(
    git,
    ['for-each-ref', '--sort=refname', '--format=%(HEAD)%00%(refname:short)', 'refs/heads'],
    'list branches',
  );
  if (!Array.isArray(listed)) return listed;
  if (listed.length === 0) return ok('No branches found.');
  const branches = listed.map((line) => ({ current: line.startsWith('*'), name: line.slice(line.indexOf('\0') + 1) }));
  return listPage(
    branches,
    request,
    'Branches:',
    'branches',
    (branch) => `${branch.current ? '* ' : '  '}${branch.name}`,
  );
}

/** `git checkout <ref>`: switch to a branch or detach at a commit (`force` discards local changes). */
export async function gitCheckout(git: GitProcess, args: GitArgs): Promise<ToolResult> {
  const ref = args.ref as string;
  const refused = await verifyRef(git, ref, 'checkout');
  if (refused) return refused;
  // The trailing "--" makes git read the ref as a revision, never as a path.
  const run = await git.run(['checkout', ...(args.force ? ['--force'] : []), ref, '--']);
  if (run.code !== 0) return toolError(`Failed to checkout: ${failureText(run)}`);
  return ok(`Checked out: ${ref}${run.stdout.trim() ? `\n${run.stdout.trim()}` : ''}`);
}

/** `git diff [target]`: the working tree against the index, or against `target`, paged by bytes. */
export async function gitDiff(git: GitProcess, args: GitArgs): Promise<ToolResult> {
  if (args.target !== undefined) {
    const refused = await verifyRef(git, args.target, 'get diff');
    if (refused) return refused;
  }
  const run = await git.run([
    'diff',
    '--no-ext-diff',
    '--no-textconv',
    '--no-color',
    ...(args.target !== undefined ? [args.target] : []),
    '--',
  ]);
  if (run.code !== 0) return toolError(`Failed to get diff: ${failureText(run)}`);
  if (run.stdout.trim() === '') return ok('No changes.');
  const page = diffPage(run.stdout, args);
  return typeof page === 'string' ? toolError(page, { reason: 'invalid_byte_offset' }) : ok(page.output, page.metadata);
}

/** `git stash`: list stashes, or create one when `message` or `include_untracked` is given. */
export async function gitStash(git: GitProcess, args: GitArgs): Promise<ToolResult> {
  const stashes = async () => lines(git, ['stash', 'list', '--format=%gd%x00%gs'], 'list stashes');
  if (args.message !== undefined || args.include_untracked === true) {
    const before = await stashes();
    if (!Array.isArray(before)) return before;
    const run = await git.run([
      'stash',
      'push',
      ...(args.include_untracked ? ['--include-untracked'] : []),
      ...(args.message !== undefined ? [`--message=${args.message}`] : []),
    ]);
    if (run.code !== 0) return toolError(`Failed to stash: ${failureText(run)}`);
    const after = await stashes();
    if (Array.isArray(after) && after.length === before.length)
      return ok('No local changes to save.', { created: false });
    return ok('Created stash', { created: true });
  }
  const request = pageRequest(args, DEFAULT_GIT_LIST_LIMIT);
  if (typeof request === 'string') return toolError(request, { reason: 'invalid_cursor' });
  const listed = await stashes();
  if (!Array.isArray(listed)) return listed;
  if (listed.length === 0) return ok('No stashes found.');
  return listPage(listed, request, 'Stashes:', 'stashes', (line) => line.replace('\0', ': '));
}

/** `git remote`: the configured remotes with credential-free URLs. */
export async function gitRemote(git: GitProcess, args: GitArgs): Promise<ToolResult> {
  const request = pageRequest(args, DEFAULT_GIT_LIST_LIMIT);
  if (typeof request === 'string') return toolError(request, { reason: 'invalid_cursor' });
  const listed = await lines(git, ['remote', '-v'], 'list remotes');
  if (!Array.isArray(listed)) return listed;
  const remotes = listed
    .map((line) => /^(\S+)\t(.*?)(?: \((fetch|push)\))?$/.exec(line))
    .filter(
      (match): match is RegExpExecArray =>
        match !== null && (args.remote_name === undefined || match[1] === args.remote_name),
    )
    .map((match) => `${match[1]}\t${sanitizeRemoteUrl(match[2])}${match[3] ? ` (${match[3]})` : ''}`);
  if (remotes.length === 0) return ok('No remotes configured.');
  return listPage(remotes, request, 'Remotes:', 'remotes', (line) => line);
}

interface Worktree {
  path: string;
  branch: string;
  bare: boolean;
  detached: boolean;
}

async function listWorktrees(git: GitProcess): Promise<Worktree[] | ToolResult> {
  const run = await git.run(['worktree', 'list', '--porcelain', '-z']);
  if (run.code !== 0) return toolError(`Failed to list worktrees: ${failureText(run)}`);
  const worktrees: Worktree[] = [];
  for (const field of run.stdout.split('\0')) {
    if (field.startsWith('worktree '))
      worktrees.push({ path: field.slice(9), branch: '', bare: false, detached: false });
    const current = worktrees[worktrees.length - 1];
    if (!current) continue;
    if (field.startsWith('branch ')) current.branch = field.slice(7).replace(/^refs\/heads\//, '');
    else if (field === 'bare') current.bare = true;
    else if (field === 'detached') current.detached = true;
  }
  return worktrees;
}

/**
 * `git worktree list|create|remove`; created and removed worktrees must lie inside the workspace. Their paths are
 * resolved by the confined walk (never by name on the host), parents of a new one created through it; git itself
 * runs in the sandbox.
 */
export async function gitWorktree(git: GitProcess, args: GitArgs, files: WorkspaceFiles): Promise<ToolResult> {
  const subcommand = args.subcommand ?? 'list';
  if (subcommand === 'list') {
    const request = pageRequest(args, DEFAULT_GIT_LIST_LIMIT);
    if (typeof request === 'string') return toolError(request, { reason: 'invalid_cursor' });
    const all = await listWorktrees(git);
    if (!Array.isArray(all)) return all;
    if (all.length === 0) return ok('No worktrees found.');
    const page = pageOf(all, request);
    if (typeof page === 'string') return toolError(page, { reason: 'invalid_cursor' });
    const entries = page.items.map(
      (wt) => `  ${wt.path}${wt.bare ? ' (bare)' : wt.detached ? ' (detached)' : ` [${wt.branch}]`}`,
    );
    const more = page.nextCursor === null ? '' : `\nMore worktrees available; continue with cursor=${page.nextCursor}`;
    return ok(`Worktrees (${page.items.length} of ${all.length}):\n${entries.join('\n')}${more}`, {
      page: page.metadata,
    });
  }
  const userPath = args.path ?? path.join('.worktrees', (args.name as string).replace(/[^A-Za-z0-9._-]+/g, '-'));
  let resolved: CanonicalName;
  try {
    resolved = canonicalName(files, userPath);
    if (subcommand === 'remove' && !resolved.exists) throw new WorkspacePathNotFoundError(userPath);
  } catch (error) {
    return subcommand === 'remove'
      ? existingPathErrorResult(error, userPath, 'Path')
      : pathErrorResult(error, userPath, 'Path');
  }
  if (resolved.relative === '.')
    return toolError('The workspace itself is not a removable or creatable worktree path.', {
      reason: 'invalid_worktree_path',
    });
  const shown = resolved.relative;
  if (subcommand === 'remove') {
    const all = await listWorktrees(git);
    if (!Array.isArray(all)) return all;
    if (!all.slice(1).some((wt) => wt.path === resolved.absolute))
      return toolError(`${shown} is not a linked worktree of this repository.`, { reason: 'not_a_worktree' });
    const run = await git.run(['worktree', 'remove', ...(args.force ? ['--force'] : []), resolved.absolute]);
    if (run.code !== 0) return toolError(`Failed to remove worktree: ${failureText(run)}`);
    return ok(`Removed worktree at: ${shown}`, { path: shown });
  }
  const name = args.name as string;
  const newBranch = args.new_branch ?? true;
  const base = args.base ?? 'HEAD';
  const refused =
    (await validBranchName(git, name)) ?? (await verifyRef(git, newBranch ? base : name, 'create worktree'));
  if (refused) return refused;
  let target: string;
  try {
    // The parents are created by the walk, inside; git gets the path that walk led to.
    const location = files.locate(userPath, { createParents: true });
    location.close();
    target = location.absolute;
  } catch (error) {
    return pathErrorResult(error, userPath, 'Path');
  }
  const run = await git.run(['worktree', 'add', ...(newBranch ? ['-b', name, target, base] : [target, name])]);
  if (run.code !== 0) return toolError(`Failed to create worktree: ${failureText(run)}`);
  return ok(`Created worktree at: ${shown}\nBranch: ${name}`, { path: shown, branch: name });
}

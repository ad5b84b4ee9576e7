import { z } from 'zod';

/** The git commands the tool offers (the seed's list). */
export const GIT_COMMANDS = ['status', 'log', 'branch', 'checkout', 'diff', 'stash', 'remote', 'worktree'] as const;
/** Most entries one list or log page returns. */
export const MAX_GIT_PAGE_LIMIT = 200;
/** Default page size of `log`. */
export const DEFAULT_GIT_LOG_LIMIT = 10;
/** Default page size of the other list commands. */
export const DEFAULT_GIT_LIST_LIMIT = 50;
/** Default, smallest and largest `max_bytes` of one diff page. */
export const DEFAULT_DIFF_BYTES = 64 * 1024;
export const MIN_DIFF_BYTES = 256;
export const MAX_DIFF_BYTES = 100 * 1024;

// A value git could read as an option, or one carrying control characters, is refused before anything runs.
const noOption = (what: string) =>
  z
    .string()
    .min(1)
    .max(1024)
    .refine((value) => !value.startsWith('-'), { message: `${what} must not start with "-"` })
    .refine((value) => ![...value].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f), {
      message: `${what} must not contain control characters`,
    });

/*
 * Key order matters: parsed arguments keep it, and the permission subject of git is their compact JSON.
 * The keys that make a call mutating (subcommand, name, message, include_untracked) come right after
 * `command`, so the built-in default policy can allow exactly the read-only forms with prefix patterns.
 */
const shape = {
  command: z.enum(GIT_COMMANDS).describe('Required. Git command to execute.'),
  subcommand: z.enum(['list', 'create', 'remove']).optional().describe('Worktree subcommand (default list).'),
  name: noOption('name')
    .optional()
    .describe('Branch name: creates a branch with command=branch; the branch of a new worktree with worktree create.'),
  message: z.string().max(4096).optional().describe('Message for stash; giving it creates a stash.'),
  include_untracked: z
    .boolean()
    .optional()
    .describe('Include untracked files in a new stash (default false); true creates a stash.'),
  path: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .describe('Worktree path inside the workspace (create: default .worktrees/<name>; remove: required).'),
  ref: noOption('ref').optional().describe('Reference (branch, tag, commit) for checkout.'),
  force: z.boolean().optional().describe('Force checkout or worktree remove even if it loses changes (default false).'),
  target: noOption('target')
    .optional()
    .describe('Target ref for diff (e.g. HEAD~1, main). If omitted, diffs the working tree against the index.'),
  max_count: z
    .number()
    .int()
    .min(1)
    .max(MAX_GIT_PAGE_LIMIT)
    .optional()
    .describe('Deprecated alias for limit when command=log.'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_GIT_PAGE_LIMIT)
    .optional()
    .describe(
      `Maximum list or log entries to return. Defaults to ${DEFAULT_GIT_LOG_LIMIT} for log and ${DEFAULT_GIT_LIST_LIMIT} for other list commands; maximum ${MAX_GIT_PAGE_LIMIT}.`,
    ),
  cursor: z
    .string()
    .max(32)
    .optional()
    .describe('Opaque continuation cursor returned by a previous log, branch, stash, remote or worktree list call.'),
  byte_offset: z.number().int().min(0).optional().describe('Byte offset for continuing a diff response (default 0).'),
  max_bytes: z
    .number()
    .int()
    .min(MIN_DIFF_BYTES)
    .max(MAX_DIFF_BYTES)
    .optional()
    .describe(`Maximum UTF-8 bytes returned by diff. Default ${DEFAULT_DIFF_BYTES}; maximum ${MAX_DIFF_BYTES}.`),
  remote_name: noOption('remote_name').optional().describe('Only list this remote (command=remote).'),
  new_branch: z.boolean().optional().describe('Create a new branch for the worktree (default true).'),
  base: noOption('base').optional().describe('Base ref for a new branch (default HEAD).'),
};

type Key = keyof typeof shape;

// Which arguments each command (and worktree subcommand) uses; any other is refused, so a call means one thing.
const USES: Record<string, readonly Key[]> = {
  status: [],
  log: ['max_count', 'limit', 'cursor'],
  branch: ['name', 'base', 'limit', 'cursor'],
  checkout: ['ref', 'force'],
  diff: ['target', 'byte_offset', 'max_bytes'],
  stash: ['message', 'include_untracked', 'limit', 'cursor'],
  remote: ['remote_name', 'limit', 'cursor'],
  'worktree list': ['subcommand', 'limit', 'cursor'],
  'worktree create': ['subcommand', 'name', 'path', 'new_branch', 'base'],
  'worktree remove': ['subcommand', 'path', 'force'],
};

/** The git tool's strict argument schema (validated before any confirmation or side effect). */
export const gitParameters = z
  .object(shape)
  .strict()
  .superRefine((args, ctx) => {
    const form = args.command === 'worktree' ? `worktree ${args.subcommand ?? 'list'}` : args.command;
    const allowed = USES[form];
    for (const key of Object.keys(args) as Key[]) {
      if (key === 'command' || args[key] === undefined || allowed.includes(key)) continue;
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message: `${key} is not used by git ${form} (it takes: ${allowed.join(', ') || 'no other arguments'})`,
      });
    }
    const require = (key: Key) => {
      if (args[key] === undefined)
        ctx.addIssue({ code: 'custom', path: [key], message: `${key} is required for git ${form}` });
    };
    if (form === 'checkout') require('ref');
    if (form === 'worktree create') require('name');
    if (form === 'worktree remove') require('path');
    if (form === 'branch' && args.name === undefined && args.base !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['base'], message: 'base is only used together with name (branch create)' });
    }
    if (form === 'branch' && args.name !== undefined && (args.limit !== undefined || args.cursor !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['name'],
        message: 'name creates a branch; limit and cursor only page the branch list',
      });
    }
    if (args.limit !== undefined && args.max_count !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['max_count'],
        message: 'give limit or its deprecated alias max_count, not both',
      });
    }
  });

/** Parsed git arguments. */
export type GitArgs = z.infer<typeof gitParameters>;

/**
 * True when this call only inspects the repository (the seed's rule): status, log, diff and remote
 * always; branch without name; stash without message and include_untracked; worktree list. Checkout,
 * branch create, stash push and worktree create/remove change the repository or the workspace.
 */
export function isGitReadOnly(args: unknown): boolean {
  const parsed = gitParameters.safeParse(args);
  if (!parsed.success) return false;
  const call = parsed.data;
  switch (call.command) {
    case 'status':
    case 'log':
    case 'diff':
    case 'remote':
      return true;
    case 'branch':
      return call.name === undefined;
    case 'stash':
      return call.message === undefined && call.include_untracked !== true;
    case 'worktree':
      return (call.subcommand ?? 'list') === 'list';
    case 'checkout':
      return false;
  }
}

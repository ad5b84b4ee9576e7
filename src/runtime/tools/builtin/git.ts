import { spawn } from 'node:child_process';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, loadPrompt, toolError, type ToolResult } from '../define-tool.js';
import { OutputCollector } from '../output-collector.js';
import { sanitizedEnv } from '../process-env.js';
import { pathErrorResult } from '../tool-file-helpers.js';
import { resolveInWorkspace } from '../workspace-path.js';

const COMMANDS = ['status', 'diff', 'log', 'branch'] as const;
type GitCommand = (typeof COMMANDS)[number];

const parameters = z
  .object({
    command: z.enum(COMMANDS).describe('The git subcommand to run.'),
    args: z
      .array(z.string())
      .max(64)
      .optional()
      .describe('Extra arguments, one per item (only the allowed flags, revisions and paths inside the workspace).'),
  })
  .strict();

/** What each subcommand accepts; anything else starting with `-` is refused. */
interface ArgPolicy {
  flags: ReadonlySet<string>;
  patterns: readonly RegExp[];
  /** Flags followed by a value in the next argument, with the value's shape. */
  valued: ReadonlyMap<string, RegExp>;
  /** `paths`: confined paths only; `revs`: revisions or confined paths; `list`: branch patterns after --list. */
  positionals: 'paths' | 'revs' | 'list';
}

const COUNT = /^\d{1,6}$/;
const POLICIES: Record<GitCommand, ArgPolicy> = {
  status: {
    flags: new Set(['-s', '--short', '-b', '--branch', '--porcelain', '--long']),
    patterns: [/^--porcelain=v[12]$/, /^-u(no|normal|all)?$/, /^--untracked-files=(no|normal|all)$/],
    valued: new Map(),
    positionals: 'paths',
  },
  diff: {
    flags: new Set(['--stat', '--cached', '--staged', '--name-only', '--name-status', '--numstat', '--shortstat', '-w', '--ignore-space-change', '--ignore-all-space']),
    patterns: [/^-U\d{1,4}$/, /^--unified=\d{1,4}$/],
    valued: new Map(),
    positionals: 'revs',
  },
  log: {
    flags: new Set(['--oneline', '--stat', '--name-only', '--name-status', '-p', '--patch', '--graph', '--decorate']),
    patterns: [/^-n\d{1,6}$/, /^--max-count=\d{1,6}$/],
    valued: new Map([['-n', COUNT]]),
    positionals: 'revs',
  },
  branch: {
    flags: new Set(['-a', '--all', '-r', '--remotes', '--list', '-v', '-vv', '--show-current', '--merged', '--no-merged']),
    patterns: [],
    valued: new Map(),
    positionals: 'list',
  },
};

// Git options that keep read-only commands read-only and free of repository-configured programs.
const GLOBAL_ARGS = ['--no-pager', '--no-optional-locks', '-c', 'core.quotepath=off', '-c', 'color.ui=never', '-c', 'core.fsmonitor=false'];
const COMMAND_ARGS: Record<GitCommand, string[]> = {
  status: [],
  diff: ['--no-ext-diff', '--no-textconv'],
  log: ['--no-ext-diff', '--no-textconv'],
  branch: [],
};

/** A refused argument, reported as the tool's result. */
class ArgumentRefused extends Error {}

async function checkArgs(command: GitCommand, args: readonly string[], workspace: string): Promise<string[]> {
  const policy = POLICIES[command];
  const listing = args.includes('--list');
  let afterDashDash = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (afterDashDash || !arg.startsWith('-')) {
      if (policy.positionals === 'list' && !afterDashDash) {
        // Without --list, `git branch <name>` would create a branch.
        if (!listing) throw new ArgumentRefused(`git branch takes a pattern only together with --list (got "${arg}").`);
        continue;
      }
      await resolveInWorkspace(workspace, arg);
      continue;
    }
    if (arg === '--') {
      if (policy.positionals === 'list') throw new ArgumentRefused('git branch does not take "--".');
      afterDashDash = true;
      continue;
    }
    if (policy.flags.has(arg) || policy.patterns.some((pattern) => pattern.test(arg))) continue;
    const valueShape = policy.valued.get(arg);
    if (valueShape) {
      const value = args[i + 1];
      if (value === undefined || !valueShape.test(value)) throw new ArgumentRefused(`${arg} must be followed by a number (got ${JSON.stringify(value)}).`);
      i++;
      continue;
    }
    throw new ArgumentRefused(`The argument "${arg}" is not allowed for git ${command}. See the tool description for the allowed flags.`);
  }
  return [...args];
}

function gitEnv(workspace: string): NodeJS.ProcessEnv {
  const env = sanitizedEnv();
  // A repository or index chosen by the server's environment must not replace the workspace's.
  for (const name of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_COMMON_DIR']) delete env[name];
  // Stop discovery at the workspace: a repository above it is outside the confinement.
  env.GIT_CEILING_DIRECTORIES = path.dirname(workspace);
  return env;
}

interface GitRun {
  code: number | null;
  stdout: string;
  stderr: string;
  cancelled: boolean;
  spawnError?: string;
}

function runGit(argv: string[], workspace: string, signal: AbortSignal): Promise<GitRun> {
  return new Promise((resolve) => {
    const stdout = new OutputCollector();
    const stderr = new OutputCollector(1024 * 1024);
    const child = spawn('git', argv, { cwd: workspace, env: gitEnv(workspace), stdio: ['ignore', 'pipe', 'pipe'], signal });
    child.stdout.setEncoding('utf8').on('data', (text: string) => stdout.append(text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => stderr.append(text));
    let spawnError: string | undefined;
    child.on('error', (error) => {
      if (error.name !== 'AbortError') spawnError = error.message;
    });
    child.on('close', (code) => {
      resolve({ code, stdout: stdout.toString(), stderr: stderr.toString(), cancelled: signal.aborted, spawnError });
    });
  });
}

/** The `git` tool: read-only status, diff, log and branch with an allow-list of flags, no shell. */
export const gitTool = defineTool({
  name: 'git',
  description: loadPrompt(import.meta.url, 'git.md'),
  parameters,
  readOnly: true,
  async execute(args, ctx): Promise<ToolResult> {
    let extra: string[];
    try {
      extra = await checkArgs(args.command, args.args ?? [], ctx.workspace);
    } catch (error) {
      if (error instanceof ArgumentRefused) return toolError(error.message, { reason: 'argument_refused' });
      return pathErrorResult(error, 'argument');
    }
    if (ctx.signal.aborted) return toolError('git was cancelled.', { reason: 'cancelled' });
    const run = await runGit([...GLOBAL_ARGS, args.command, ...COMMAND_ARGS[args.command], ...extra], ctx.workspace, ctx.signal);
    if (run.cancelled) return toolError('git was cancelled.', { reason: 'cancelled' });
    if (run.spawnError) return toolError(`Could not run git: ${run.spawnError}`, { reason: 'spawn_failed' });
    if (run.code !== 0 && /not a git repository/i.test(run.stderr)) {
      return toolError('The workspace is not a git repository (no .git at the workspace root).', { reason: 'not_a_repository', exit_code: run.code });
    }
    if (run.code !== 0) {
      const detail = `${run.stderr}${run.stdout}`.trim();
      return { output: `git ${args.command} failed (exit code ${run.code ?? 'unknown'}):\n${detail}`, exitCode: run.code ?? 1, metadata: { exit_code: run.code } };
    }
    const body = run.stdout.length > 0 ? run.stdout : '(no output)';
    const output = run.stderr.trim().length > 0 ? `${body}\n${run.stderr.trim()}` : body;
    return { output, exitCode: 0, metadata: { exit_code: 0 } };
  },
});

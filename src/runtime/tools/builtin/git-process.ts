import { spawn } from 'node:child_process';
import path from 'node:path';
import { OutputCollector } from '../output-collector.js';
import { sanitizedEnv } from '../process-env.js';

/** One finished git process. */
export interface GitRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly cancelled: boolean;
  readonly spawnError?: string;
}

/**
 * Options on every git call that keep repository-configured programs from running: no pager, no
 * fsmonitor, no hooks (checkout and worktree add run post-checkout), no submodule recursion, no
 * external diff, no credential or askpass helper, no editor.
 */
const HARDENING = [
  '--no-pager',
  '--no-optional-locks',
  '-c', 'core.quotepath=off',
  '-c', 'color.ui=never',
  '-c', 'core.fsmonitor=false',
  '-c', 'core.hooksPath=/dev/null',
  '-c', 'core.pager=cat',
  '-c', 'core.editor=true',
  '-c', 'core.askPass=',
  '-c', 'credential.helper=',
  '-c', 'diff.external=',
  '-c', 'submodule.recurse=false',
  '-c', 'protocol.allow=never',
  '-c', 'advice.detachedHead=false',
];

function gitEnv(workspace: string): NodeJS.ProcessEnv {
  const env = sanitizedEnv();
  // A repository, index or config chosen by the server's environment must not replace the workspace's.
  for (const name of Object.keys(env)) if (name.startsWith('GIT_') && name !== 'GIT_PAGER' && name !== 'GIT_TERMINAL_PROMPT') delete env[name];
  // Stop discovery at the workspace: a repository above it is outside the confinement.
  env.GIT_CEILING_DIRECTORIES = path.dirname(workspace);
  env.GIT_OPTIONAL_LOCKS = '0';
  return env;
}

function spawnGit(argv: readonly string[], workspace: string, signal: AbortSignal): Promise<GitRun> {
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

/** Runs git in one workspace with the hardening options, neutralising filter drivers the repository configures. */
export class GitProcess {
  private filterOverrides: string[] | undefined;

  constructor(
    readonly workspace: string,
    private readonly signal: AbortSignal,
  ) {}

  /** Run `git <args>` (no shell) and collect its output. */
  async run(args: readonly string[]): Promise<GitRun> {
    const overrides = await this.filters();
    return spawnGit([...HARDENING, ...overrides, ...args], this.workspace, this.signal);
  }

  /**
   * Clean/smudge/process filters named in the repository's config would run on checkout, stash and
   * status; each configured driver is overridden with an empty command (git then passes content through).
   */
  private async filters(): Promise<string[]> {
    if (this.filterOverrides) return this.filterOverrides;
    const listed = await spawnGit([...HARDENING, 'config', '--null', '--name-only', '--get-regexp', '^filter\\.'], this.workspace, this.signal);
    const drivers = new Set<string>();
    for (const key of listed.code === 0 ? listed.stdout.split('\0') : []) {
      const match = /^filter\.(.+)\.[^.]+$/s.exec(key);
      if (match) drivers.add(match[1]);
    }
    this.filterOverrides = [...drivers].flatMap((driver) => [
      '-c', `filter.${driver}.clean=`,
      '-c', `filter.${driver}.smudge=`,
      '-c', `filter.${driver}.process=`,
      '-c', `filter.${driver}.required=false`,
    ]);
    return this.filterOverrides;
  }
}

/** The text of a failed run, for the model: stderr and stdout, trimmed. */
export function failureText(run: GitRun): string {
  return `${run.stderr}${run.stdout}`.trim() || `exit code ${run.code ?? 'unknown'}`;
}

import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import path from 'node:path';
import { OutputCollector } from '../output-collector.js';
import { CommandRefusedError, type CommandLauncher, type PreparedCommand } from '../../sandbox/sandbox.js';
import { UNCONTAINED_LAUNCHER } from '../../sandbox/session-commands.js';

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
  '-c',
  'core.quotepath=off',
  '-c',
  'color.ui=never',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.pager=cat',
  '-c',
  'core.editor=true',
  '-c',
  'core.askPass=',
  '-c',
  'credential.helper=',
  '-c',
  'diff.external=',
  '-c',
  'submodule.recurse=false',
  '-c',
  'protocol.allow=never',
  '-c',
  'advice.detachedHead=false',
];

/**
 * Variables added to the sandbox's from-scratch environment (which never carries the server's GIT_*): stop
 * discovery at the workspace, since a repository above it is outside the confinement.
 */
function gitEnv(workspace: string): Record<string, string> {
  return { GIT_CEILING_DIRECTORIES: path.dirname(workspace), GIT_OPTIONAL_LOCKS: '0' };
}

async function spawnGit(
  argv: readonly string[],
  workspace: string,
  signal: AbortSignal,
  launcher: CommandLauncher,
): Promise<GitRun> {
  let prepared;
  try {
    prepared = await launcher.prepare(['git', ...argv], { cwd: workspace, env: gitEnv(workspace) });
  } catch (error) {
    const message =
      error instanceof CommandRefusedError
        ? error.message
        : `could not start git: ${error instanceof Error ? error.message : String(error)}`;
    return { code: null, stdout: '', stderr: '', cancelled: false, spawnError: message };
  }
  try {
    return await runGit(prepared, signal);
  } finally {
    await prepared.release();
  }
}

function runGit(prepared: PreparedCommand, signal: AbortSignal): Promise<GitRun> {
  const { file, args, env, cwd } = prepared;
  return new Promise((resolve) => {
    const stdout = new OutputCollector();
    const stderr = new OutputCollector(1024 * 1024);
    const child = spawn(file, [...args], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe', ...prepared.inheritFds],
      signal,
      ...(prepared.uid !== undefined ? { uid: prepared.uid, gid: prepared.gid } : {}),
    }) as ChildProcessByStdio<null, Readable, Readable>;
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
    /** The session's sandbox for this call (absent in hand-built contexts: unsandboxed). */
    private readonly launcher: CommandLauncher = UNCONTAINED_LAUNCHER,
  ) {}

  /** Run `git <args>` (no shell) and collect its output. */
  async run(args: readonly string[]): Promise<GitRun> {
    const overrides = await this.filters();
    return spawnGit([...HARDENING, ...overrides, ...args], this.workspace, this.signal, this.launcher);
  }

  /**
   * Clean/smudge/process filters named in the repository's config would run on checkout, stash and
   * status; each configured driver is overridden with an empty command (git then passes content through).
   */
  private async filters(): Promise<string[]> {
    if (this.filterOverrides) return this.filterOverrides;
    const listed = await spawnGit(
      [...HARDENING, 'config', '--null', '--name-only', '--get-regexp', '^filter\\.'],
      this.workspace,
      this.signal,
      this.launcher,
    );
    const drivers = new Set<string>();
    for (const key of listed.code === 0 ? listed.stdout.split('\0') : []) {
      const match = /^filter\.(.+)\.[^.]+$/s.exec(key);
      if (match) drivers.add(match[1]);
    }
    this.filterOverrides = [...drivers].flatMap((driver) => [
      '-c',
      `filter.${driver}.clean=`,
      '-c',
      `filter.${driver}.smudge=`,
      '-c',
      `filter.${driver}.process=`,
      '-c',
      `filter.${driver}.required=false`,
    ]);
    return this.filterOverrides;
  }
}

/** The text of a failed run, for the model: stderr and stdout, trimmed. */
export function failureText(run: GitRun): string {
  return `${run.stderr}${run.stdout}`.trim() || `exit code ${run.code ?? 'unknown'}`;
}

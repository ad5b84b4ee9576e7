import { WorkspaceChangedError } from '../../workspace/workspace-errors.js';
import { workspaceChangedResult } from '../tool-file-helpers.js';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { constants as osConstants } from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';
import { defineTool, loadPrompt, toolError, type ToolContext, type ToolResult } from '../define-tool.js';
import { OutputCollector } from '../output-collector.js';
import { CommandRefusedError, DiskQuotaExceededError, type PreparedCommand } from '../../sandbox/sandbox.js';
import { UNCONTAINED_LAUNCHER } from '../../sandbox/session-commands.js';
import { groupHasLiveMembers, signalGroup } from '../process-group.js';

const DEFAULT_TIMEOUT_MS = 120_000;
const MAX_TIMEOUT_MS = 600_000;
/** Grace between SIGTERM and SIGKILL for the command's process group. */
const KILL_GRACE_MS = 2_000;
/** After the shell exits, how long to wait for the pipes to close before giving up on stragglers. */
const CLOSE_GRACE_MS = KILL_GRACE_MS + 1_000;
/** How long the result waits for signalled group members to finish exiting. */
const GROUP_EXIT_WAIT_MS = 1_000;
/** A line longer than this is streamed in pieces, so a newline-free flood cannot grow memory. */
const MAX_PENDING_LINE = 64 * 1024;

const parameters = z
  .object({
    command: z.string().min(1).describe('Required. The shell command to run with bash -c in the workspace directory.'),
    timeout: z
      .number()
      .int()
      .min(1)
      .max(MAX_TIMEOUT_MS)
      .optional()
      .describe(`Timeout in milliseconds (default ${DEFAULT_TIMEOUT_MS}, max ${MAX_TIMEOUT_MS}).`),
  })
  .strict();

/** Splits one stream into lines; `emit` gets each line without its newline and whether it had one. */
class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  constructor(private readonly emit: (text: string, terminated: boolean) => void) {}

  push(chunk: Buffer): void {
    const text = this.pending + this.decoder.write(chunk);
    const parts = text.split('\n');
    this.pending = parts.pop() ?? '';
    for (const line of parts) this.emit(line, true);
    while (this.pending.length > MAX_PENDING_LINE) {
      this.emit(this.pending.slice(0, MAX_PENDING_LINE), false);
      this.pending = this.pending.slice(MAX_PENDING_LINE);
    }
  }

  end(): void {
    const rest = this.pending + this.decoder.end();
    this.pending = '';
    if (rest.length > 0) this.emit(rest, false);
  }
}

function exitStatus(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  if (signal) return 128 + (osConstants.signals[signal] ?? 0);
  return 1;
}

const cancelledBeforeStart = (): ToolResult => ({
  ...toolError('Command was cancelled before it started.', { exit_code: null, timed_out: false, cancelled: true }),
  errorKind: { type: 'cancelled', op: 'bash' },
});

/**
 * The `bash` tool: run a command in the session's sandbox (its own process group, and with bwrap its
 * own PID namespace and cgroup), streaming lines, killed as a whole; nothing it started outlives it.
 */
export const bashTool = defineTool({
  name: 'bash',
  description: loadPrompt(import.meta.url, 'bash.md'),
  parameters,
  readOnly: false,
  async execute(args, ctx): Promise<ToolResult> {
    if (ctx.signal.aborted) return cancelledBeforeStart();
    let prepared: PreparedCommand;
    try {
      prepared = await (ctx.commands ?? UNCONTAINED_LAUNCHER).prepare(['bash', '-c', args.command], {
        cwd: ctx.workspace,
      });
    } catch (error) {
      if (error instanceof WorkspaceChangedError) return workspaceChangedResult(error);
      // The session's disk bound: a tool error the model can act on (remove files), the run goes on.
      if (error instanceof DiskQuotaExceededError)
        return toolError(error.message, {
          exit_code: null,
          timed_out: false,
          cancelled: false,
          refused: true,
          reason: 'disk_quota_exceeded',
          code: error.code,
          disk: error.details,
        });
      const refused = error instanceof CommandRefusedError;
      return toolError(
        refused ? error.message : `Could not start bash: ${error instanceof Error ? error.message : String(error)}`,
        { exit_code: null, timed_out: false, cancelled: false, ...(refused ? { refused: true } : {}) },
      );
    }
    try {
      if (ctx.signal.aborted) return cancelledBeforeStart();
      return await runPrepared(prepared, args.timeout ?? DEFAULT_TIMEOUT_MS, ctx);
    } finally {
      await prepared.release();
    }
  },
});

/** Spawn a prepared command as the leader of its own process group and collect its result. */
function runPrepared(prepared: PreparedCommand, timeoutMs: number, ctx: ToolContext): Promise<ToolResult> {
  return new Promise<ToolResult>((resolve) => {
    const collected = new OutputCollector();
    // The result keeps the output exactly; each streamed delta is one line ending in "\n".
    const onLine = (text: string, terminated: boolean): void => {
      collected.append(terminated ? `${text}\n` : text);
      ctx.onOutput(`${text}\n`);
    };
    const stdoutLines = new LineSplitter(onLine);
    const stderrLines = new LineSplitter(onLine);
    let timedOut = false;
    let cancelled = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    let closeTimer: NodeJS.Timeout | undefined;
    let settled = false;

    // detached: the child leads its own process group, so the group can be killed as a whole.
    const child = spawn(prepared.file, [...prepared.args], {
      cwd: prepared.cwd,
      detached: true,
      env: prepared.env,
      stdio: ['ignore', 'pipe', 'pipe', ...prepared.inheritFds],
      // sandbox.run_as when the server is root.
      ...(prepared.uid !== undefined ? { uid: prepared.uid, gid: prepared.gid } : {}),
      // The extra descriptors do not change the three pipes' types.
    }) as ChildProcessByStdio<null, Readable, Readable>;
    const pid = child.pid;

    const killGroup = (): void => {
      if (pid === undefined || killTimer) return;
      // In a sandbox the command's own processes get SIGTERM first (a TERM trap can run); the group's
      // SIGKILL after the grace takes the sandbox down with everything in it.
      if (prepared.signalCommand) {
        if (!prepared.signalCommand('SIGTERM') && !signalGroup(pid, 0)) return;
      } else if (!signalGroup(pid, 'SIGTERM')) return;
      killTimer = setTimeout(() => signalGroup(pid, 'SIGKILL'), KILL_GRACE_MS);
      killTimer.unref();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    const onAbort = (): void => {
      cancelled = true;
      killGroup();
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });

    const finish = (result: ToolResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(closeTimer);
      ctx.signal.removeEventListener('abort', onAbort);
      void settleGroup().then(() => resolve(result));
    };
    // Signalled processes close their pipes a moment before they are gone: wait briefly, so none
    // outlives the result, and keep the SIGKILL pending only if something survived SIGTERM.
    const settleGroup = async (): Promise<void> => {
      if (!killTimer || pid === undefined) return;
      const deadline = Date.now() + GROUP_EXIT_WAIT_MS;
      let alive = await groupHasLiveMembers(pid);
      while (alive && Date.now() < deadline) {
        await delay(20);
        alive = await groupHasLiveMembers(pid);
      }
      if (!alive) clearTimeout(killTimer);
    };

    child.stdout.on('data', (chunk: Buffer) => stdoutLines.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderrLines.push(chunk));
    child.on('error', (error) => {
      finish(
        toolError(`Could not start bash: ${error.message}`, { exit_code: null, timed_out: false, cancelled: false }),
      );
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Background processes must not outlive the call: they would hold the pipes and leak.
      killGroup();
      // A process that left the group may still hold the pipes; do not wait for it forever.
      closeTimer = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        onClosed();
      }, CLOSE_GRACE_MS);
    });
    const onClosed = (): void => {
      stdoutLines.end();
      stderrLines.end();
      const status = exitStatus(exit?.code ?? null, exit?.signal ?? null);
      let output = collected.toString();
      if (timedOut) output += `${output && !output.endsWith('\n') ? '\n' : ''}[Command timed out after ${timeoutMs}ms]`;
      else if (cancelled)
        output += `${output && !output.endsWith('\n') ? '\n' : ''}[Command was cancelled; its process group was killed.]`;
      const failed = timedOut || cancelled;
      finish({
        output,
        exitCode: failed && status === 0 ? 1 : status,
        ...(timedOut
          ? { errorKind: { type: 'timeout' as const, op: 'bash', duration_ms: timeoutMs } }
          : cancelled
            ? { errorKind: { type: 'cancelled' as const, op: 'bash' } }
            : {}),
        metadata: {
          ...(prepared.kind === 'bwrap' ? { sandbox: 'bwrap' } : {}),
          exit_code: exit?.code ?? null,
          signal: exit?.signal ?? null,
          timed_out: timedOut,
          cancelled,
          ...(collected.droppedChars > 0 ? { omitted_chars: collected.droppedChars } : {}),
        },
      });
    };
    child.on('close', onClosed);
  });
}

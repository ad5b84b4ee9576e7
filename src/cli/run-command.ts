import { resolve } from 'node:path';
import { SessionNotFoundError, type A3sClient, type Session, type SessionOptionsInput } from '../client/index.js';
import { readAttachFiles } from './attach-files.js';
import type { CliIo } from './cli-io.js';
import { resolveCliConfig } from './cli-config.js';
import { connect } from './connect.js';
import { EXIT } from './exit-codes.js';
import { followRun } from './follow-run.js';
import { booleanFlag, parseFlags, stringFlag, stringList, type FlagSpec, type FlagValues } from './parse-flags.js';
import { patchOutPath, writePatchOut } from './patch-out.js';
import { readPolicyFile } from './policy-file.js';
import { UsageError } from './usage-error.js';
import { MULTITASK_STRATEGIES, type MultitaskStrategy } from '../protocol/multitask-strategy.js';

/** The flags of `a3s run` (besides the global ones). */
export const RUN_FLAGS = {
  workspace: { type: 'string' },
  session: { type: 'string' },
  model: { type: 'string' },
  policy: { type: 'string' },
  approve: { type: 'boolean' },
  json: { type: 'boolean' },
  'wait-verification': { type: 'boolean' },
  multitask: { type: 'string' },
  attach: { type: 'string', multiple: true },
  keep: { type: 'boolean' },
  'patch-out': { type: 'string' },
} as const satisfies FlagSpec;

/** The --multitask value as a strategy (a usage error names the flag and the choices). */
function multitaskFlag(value: string | undefined): MultitaskStrategy | undefined {
  if (value === undefined) return undefined;
  const known = MULTITASK_STRATEGIES as readonly string[];
  if (!known.includes(value))
    throw new UsageError(`--multitask must be one of ${MULTITASK_STRATEGIES.join(', ')} (got "${value}")`, 'run');
  return value as MultitaskStrategy;
}

/** `a3s run [flags] "prompt"`: run a prompt in a new or resumed session and answer the run's exit code. */
export async function runCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags('run', args, RUN_FLAGS);
  if (positionals.length === 0) throw new UsageError('missing "prompt"', 'run');
  const prompt = positionals.length === 1 && positionals[0] === '-' ? await io.readStdin() : positionals.join(' ');
  if (prompt.trim().length === 0) throw new UsageError('the prompt is empty', 'run');
  const workspace = stringFlag(values, 'workspace');
  const model = stringFlag(values, 'model');
  const policyPath = stringFlag(values, 'policy');
  const policy = policyPath !== undefined ? readPolicyFile(policyPath, io.cwd, 'run') : undefined;
  const multitaskStrategy = multitaskFlag(stringFlag(values, 'multitask'));
  // Every file read and typed before anything is asked of the server.
  const files = readAttachFiles(stringList(values, 'attach'), io.cwd, 'run');
  const patchOut = patchOutPath(stringFlag(values, 'patch-out'), io.cwd);
  const config = resolveCliConfig(values, io);
  const client = connect(config);
  const options: SessionOptionsInput = { ...(model !== undefined ? { model } : {}), ...(policy ?? {}) };
  const session = await openSession(
    client,
    stringFlag(values, 'session'),
    workspace !== undefined ? resolve(io.cwd, workspace) : undefined,
    options,
    io,
  );
  // A session this command created is closed once its run ended, unless --keep: each call would leave one open.
  // One whose run waits for an answer or a confirmation (exit 3) stays, for `a3s answer` / `a3s approve`.
  const closeAfter = stringFlag(values, 'session') === undefined && !booleanFlag(values, 'keep');
  let code: number | undefined;
  try {
    const ran = await uploadAndRun(session, prompt, files, multitaskStrategy, values, io);
    code = ran.code;
    // Read before the session is closed (closing removes its shadow store).
    if (patchOut !== undefined) code = await writePatchOut(client, session.sessionId, ran.runId, patchOut, code, io);
    return code;
  } finally {
    if (closeAfter && code !== EXIT.questionPending) await closeCreated(session, io);
  }
}

/** Upload the attachments, start the run and follow it to its exit code. */
async function uploadAndRun(
  session: Session,
  prompt: string,
  files: ReturnType<typeof readAttachFiles>,
  multitaskStrategy: MultitaskStrategy | undefined,
  values: FlagValues,
  io: CliIo,
): Promise<{ code: number; runId: string }> {
  const attachments = [];
  for (const file of files) {
    const ref = await session.uploadAttachment(file.bytes, {
      mediaType: file.mediaType,
      ...(file.name !== undefined ? { name: file.name } : {}),
    });
    io.err(`[attach] ${file.path}: ${ref.mediaType}, ${ref.bytes} bytes (${ref.attachmentId})\n`);
    attachments.push(ref);
  }
  const runOptions = multitaskStrategy ? { multitaskStrategy } : {};
  const stream =
    attachments.length > 0
      ? await session.streamWithAttachments(prompt, attachments, undefined, runOptions)
      : await session.stream(prompt, undefined, runOptions);
  const runId = stream.runId ?? '';
  const announce = `[run] session ${session.sessionId}, run ${runId}\n`;
  const code = await followRun(
    session,
    runId,
    stream,
    {
      approve: booleanFlag(values, 'approve'),
      json: booleanFlag(values, 'json'),
      requireReport: booleanFlag(values, 'wait-verification'),
      announce,
    },
    io,
  );
  return { code, runId };
}

/** Close the session `a3s run` created (a failure to is one stderr line: the run's exit code stands). */
async function closeCreated(session: Session, io: CliIo): Promise<void> {
  try {
    await session.close();
    io.err(`[run] closed session ${session.sessionId} (--keep keeps it)\n`);
  } catch (error) {
    io.err(
      `[run] could not close session ${session.sessionId}: ${error instanceof Error ? error.message : String(error)}\n`,
    );
  }
}

/**
 * The session a run goes to: a new one (in `workspace`, with `options`), or with `--session` that session
 * resumed (live or stored) or, when no such session exists, created with that id.
 */
async function openSession(
  client: A3sClient,
  sessionId: string | undefined,
  workspace: string | undefined,
  options: SessionOptionsInput,
  io: CliIo,
): Promise<Session> {
  // The CLI answers the agent's questions (on a terminal, or by `a3s answer`): its new sessions offer ask_user.
  if (sessionId === undefined) return client.session(workspace, { askUser: true, ...options });
  try {
    const session = await client.resumeSession(sessionId);
    const ignored = [
      ...(workspace !== undefined ? ['--workspace'] : []),
      ...Object.keys(options).map((key) => (key === 'model' ? '--model' : '--policy')),
    ];
    if (ignored.length > 0)
      io.err(
        `[run] session ${sessionId} exists: ${[...new Set(ignored)].join(', ')} apply to new sessions only and were not used\n`,
      );
    return session;
  } catch (error) {
    if (!(error instanceof SessionNotFoundError)) throw error;
    return client.session(workspace, { askUser: true, ...options, sessionId });
  }
}

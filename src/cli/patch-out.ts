import { existsSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { A3sError, NoChangeSetError, type A3sClient } from '../client/index.js';
import { patchBytes } from './change-output.js';
import type { CliIo } from './cli-io.js';
import { EXIT, type ExitCode } from './exit-codes.js';
import { EXIT_INTERRUPTED } from './follow-run.js';
import { UsageError } from './usage-error.js';

/** The `--patch-out FILE` path resolved, its directory checked before the run starts (a UsageError otherwise). */
export function patchOutPath(path: string | undefined, cwd: string): string | undefined {
  if (path === undefined) return undefined;
  const full = resolve(cwd, path);
  const dir = dirname(full);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UsageError(`--patch-out ${path}: no such directory ${dir}`, 'run');
  if (existsSync(full) && statSync(full).isDirectory())
    throw new UsageError(`--patch-out ${path}: is a directory`, 'run');
  return full;
}

/**
 * After `a3s run` followed its run to exit `code`: write the run's patch to `file` (the decoded `git diff --binary`
 * of its change set) and answer the exit code. Nothing is written when the run has not ended (3, 130: the code
 * stands), has no change set or an empty one (exit 5 instead of 0), or its patch was too large to keep (1 instead
 * of 0); each case is one stderr line. A run that failed keeps its code, its patch written when it has one.
 */
export async function writePatchOut(
  client: A3sClient,
  sessionId: string,
  runId: string,
  file: string,
  code: number,
  io: CliIo,
): Promise<number> {
  const orCode = (instead: ExitCode): number => (code === EXIT.ok ? instead : code);
  if (code === EXIT.questionPending || code === EXIT_INTERRUPTED) {
    io.err(`[patch] run ${runId} has not ended: nothing written to ${file}\n`);
    return code;
  }
  let changes;
  try {
    changes = await client.changes(sessionId, runId);
  } catch (error) {
    if (error instanceof NoChangeSetError) {
      const reason = typeof error.details.reason === 'string' ? ` (${error.details.reason})` : '';
      io.err(`[patch] run ${runId} has no change set${reason}: nothing written to ${file}\n`);
      return orCode(EXIT.noChanges);
    }
    if (!(error instanceof A3sError)) throw error;
    io.err(`a3s: ${error.code}: ${error.message}: nothing written to ${file}\n`);
    return orCode(EXIT.failed);
  }
  if (changes.files.length === 0) {
    io.err(`[patch] run ${runId} changed no file: nothing written to ${file}\n`);
    return orCode(EXIT.noChanges);
  }
  if (changes.truncated) {
    io.err(
      `a3s: the patch of run ${runId} (${changes.patch_bytes} bytes) was too large for the server to keep: nothing written to ${file}\n`,
    );
    return orCode(EXIT.failed);
  }
  try {
    writeFileSync(file, patchBytes(changes));
  } catch (error) {
    io.err(`a3s: --patch-out ${file}: ${error instanceof Error ? error.message : String(error)}\n`);
    return orCode(EXIT.failed);
  }
  const n = changes.files.length;
  io.err(`[patch] wrote ${file}: ${n} file${n === 1 ? '' : 's'}, ${changes.patch_bytes} bytes\n`);
  return code;
}

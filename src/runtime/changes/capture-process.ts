import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import type { PreparedCommand } from '../sandbox/sandbox.js';
import { CAPTURE_GIT_ENV } from './capture-script.js';
import { CaptureError, type CapturedPatch } from './capture-error.js';

/** A capture that takes longer is killed (and the run's change set is not captured). */
const CAPTURE_TIMEOUT_MS = 120_000;
const MAX_STDERR = 8192;

/** The same script on the host (sandbox none, a host_direct session): the workspace entered through its held descriptor. */
export function hostCommand(argv: readonly string[], store: string): PreparedCommand {
  const [file = '/bin/sh', ...args] = argv;
  return {
    kind: 'none',
    file,
    args,
    env: {
      ...CAPTURE_GIT_ENV,
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: '/nonexistent',
      TMPDIR: process.env.TMPDIR ?? '/tmp',
      A3S_SHADOW: store,
      A3S_WS: '/proc/self/fd/3',
    },
    cwd: '/',
    inheritFds: [],
    release: () => Promise.resolve(),
  };
}

export function spawnCapture(
  prepared: PreparedCommand,
  workspaceFd: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(prepared.file, [...prepared.args], {
      cwd: prepared.cwd,
      env: prepared.env,
      // The workspace's descriptor is fd 3 in both modes (bwrap --ro-bind-fd 3; the host script enters /proc/self/fd/3).
      stdio: ['ignore', 'pipe', 'pipe', prepared.inheritFds[0] ?? workspaceFd],
      timeout: CAPTURE_TIMEOUT_MS,
      killSignal: 'SIGKILL',
      ...(prepared.uid !== undefined ? { uid: prepared.uid, gid: prepared.gid } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (text: string) => {
      if (stdout.length < 4096) stdout += text;
    });
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      if (stderr.length < MAX_STDERR) stderr += text;
    });
    child.on('error', (error) => resolve({ code: null, stdout, stderr: error.message }));
    child.on('close', (code) => {
      void prepared.release();
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The script's output directory, never through a symlink: the store is writable inside the sandbox, so what is in it
 * is read as a hostile tree would be (no link followed, no FIFO opened blocking, nothing but regular files).
 */
export async function openOutputDir(dir: string): Promise<FileHandle> {
  try {
    return await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    throw new CaptureError('failed', `the capture's output directory cannot be opened: ${(error as Error).message}`);
  }
}

/** An output file of the script in the held directory, a regular file opened without following a link; undefined when missing. */
async function openOutput(dir: FileHandle, name: string): Promise<FileHandle | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(
      `/proc/self/fd/${dir.fd}/${name}`,
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CaptureError('failed', `the capture's output ${name} cannot be opened: ${(error as Error).message}`);
  }
  if ((await handle.stat()).isFile()) return handle;
  await handle.close();
  throw new CaptureError('failed', `the capture's output ${name} is not a regular file`);
}

/** An output file of the script; empty when missing. */
export async function readOutput(dir: FileHandle, name: string): Promise<Buffer> {
  const handle = await openOutput(dir, name);
  if (handle === undefined) return Buffer.alloc(0);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** The patch file: hashed whole (streamed), its bytes kept only up to `maxBytes`. */
export async function readPatch(dir: FileHandle, maxBytes: number): Promise<CapturedPatch> {
  const handle = await openOutput(dir, 'patch');
  if (handle === undefined) throw new CaptureError('failed', 'the capture wrote no patch');
  try {
    const hash = createHash('sha256');
    const kept: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of handle.createReadStream({ autoClose: false }) as AsyncIterable<Buffer>) {
      hash.update(chunk);
      bytes += chunk.length;
      if (bytes <= maxBytes) kept.push(chunk);
    }
    return { bytes, digest: `sha256:${hash.digest('hex')}`, data: bytes <= maxBytes ? Buffer.concat(kept) : undefined };
  } finally {
    await handle.close();
  }
}

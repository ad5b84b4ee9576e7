import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { errorCode, ignoreMissing } from './fs-errors.js';

// Temp names start with "." and end with ".tmp"; the stores' ids start with a letter or digit, so a
// temp file can never be mistaken for (or collide with) a stored file.
const TEMP_FILE = /^\..+\.tmp$/;

/**
 * Create `dir` (mode 0o700) if needed and remove the temp files a crashed writer left in it; throws the
 * OS error. Only one process may own a directory at a time.
 */
export async function prepareDirectory(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  for (const name of await readdir(dir)) {
    if (TEMP_FILE.test(name)) await unlink(path.join(dir, name)).catch(ignoreMissing);
  }
}

/**
 * Replace `target` (a file in `dir`) with `data` in one step: write `.<tempPrefix>.<random>.tmp` in
 * `dir` (mode 0o600), fsync it and rename it over `target`. On failure the temp file is removed and the
 * OS error thrown. Call syncDirectory(dir) afterwards to make the rename itself durable.
 */
export async function writeFileAtomically(
  dir: string,
  target: string,
  data: string | Uint8Array,
  tempPrefix: string,
): Promise<void> {
  const temp = path.join(dir, `.${tempPrefix}.${randomBytes(8).toString('hex')}.tmp`);
  try {
    const handle = await open(temp, 'wx', 0o600);
    try {
      await (typeof data === 'string' ? handle.writeFile(data, 'utf8') : handle.writeFile(data));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (error) {
    await unlink(temp).catch(ignoreMissing);
    throw error;
  }
}

/**
 * Fsync `dir` so a rename (or unlink) in it survives a power loss, which could otherwise bring back the
 * old file; throws the OS error. File systems that cannot fsync a directory are accepted silently: the
 * rename is still atomic there.
 */
export async function syncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (error) {
    if (errorCode(error) === 'EINVAL' || errorCode(error) === 'EISDIR') return;
    throw error;
  } finally {
    await handle?.close();
  }
}

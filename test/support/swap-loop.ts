import { spawn } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** A shell loop renaming names in a directory as an attacker's process would, until stopped. */
export interface SwapLoop {
  /** Stops the loop and answers how many rounds it made. */
  stop(): Promise<number>;
}

/**
 * Runs `body` (bash, run in `cwd` with `env` added) in a loop in a child process until `stop()` (or `maxSeconds`,
 * so a failed test never leaves it running). Errors of single commands (a name missing for a moment) are ignored.
 */
export function startSwapLoop(cwd: string, body: string, env: Record<string, string> = {}, maxSeconds = 20): SwapLoop {
  const script = `n=0; trap 'echo $n; exit 0' TERM; end=$((SECONDS+${maxSeconds})); while [ $SECONDS -lt $end ]; do { ${body}; } 2>/dev/null; n=$((n+1)); done; echo $n`;
  const child = spawn('bash', ['-c', script], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const exited = new Promise<number>((resolve) => child.on('exit', () => resolve(Number(out.trim()) || 0)));
  return {
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * The body of a loop that keeps swapping `name` (a regular file whose inode is kept as `.keep-<name>`) for a
 * symlink to each of `links` and for a FIFO, always back to the real file, with `mv -T` (rename(2)): the name
 * never disappears. The next entry is made before each swap, so the name is a link (or FIFO) for the time of
 * one `mv`, then the real file for `pauseSeconds` and more.
 */
export function fileSwapBody(name: string, links: readonly string[], pauseSeconds = 0.02): string {
  const swap = (make: string): string =>
    `${make}; ln -f .keep-${name} .real-${name}; mv -T .bad-${name} ${name}; mv -T .real-${name} ${name}; sleep ${pauseSeconds}`;
  return [
    ...links.map((target) => swap(`ln -sfn '${target}' .bad-${name}`)),
    swap(`rm -f .bad-${name}; mkfifo .bad-${name}`),
  ].join('; ');
}

/**
 * The body of a loop that swaps the directory `name` for a symlink to `outside` and back with `mv -T` (a
 * directory cannot replace a symlink in one rename, so the name is also missing for a moment on each side),
 * then leaves the real directory in place for `pauseSeconds`.
 */
export function directorySwapBody(name: string, outside: string, pauseSeconds = 0.02): string {
  return `ln -sfn '${outside}' .lnk-${name}; mv -T ${name} .real-${name}; mv -T .lnk-${name} ${name}; mv -T ${name} .lnk-${name}; mv -T .real-${name} ${name}; sleep ${pauseSeconds}`;
}

/** Every entry below `dir` (not following symlinks) with its type, size, mtime and, for files, content. */
export function treeSnapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string): void => {
    for (const name of readdirSync(at).sort()) {
      const full = path.join(at, name);
      const stats = lstatSync(full);
      const key = path.relative(dir, full);
      if (stats.isDirectory()) {
        out[key] = `dir mtime=${stats.mtimeMs}`;
        walk(full);
      } else if (stats.isFile()) {
        out[key] = `file ${stats.size} mtime=${stats.mtimeMs} ino=${stats.ino} ${readFileSync(full, 'utf8')}`;
      } else {
        out[key] = `other mode=${stats.mode} mtime=${stats.mtimeMs}`;
      }
    }
  };
  walk(dir);
  return out;
}

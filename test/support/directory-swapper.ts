import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync, renameSync, symlinkSync } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';

/** A child process swapping a directory for a symlink (and back) in a tight loop, as a hostile sandbox would. */
export interface DirectorySwapper {
  /** Stops the loop, puts the real directory back under its name; resolves with how many swaps were made. */
  stop(): Promise<number>;
}

/** How the child swaps: `mv -T` from a bash loop (a process per rename), or rename(2) from a node loop (far more often). */
export type SwapMode = 'mv' | 'rename';

const MV_LOOP = `
n=0
trap 'echo $n; exit 0' TERM
while :; do
  mv -T "$1" "$1.real" && mv -T "$1.link" "$1" && mv -T "$1" "$1.link" && mv -T "$1.real" "$1" && n=$((n+1))
done`;

const RENAME_LOOP = `
const { renameSync } = require('node:fs');
const target = process.argv[1];
let n = 0;
process.on('SIGTERM', () => { process.stdout.write(String(n)); process.exit(0); });
const swap = () => {
  const end = Date.now() + 50;
  while (Date.now() < end) {
    try {
      renameSync(target, target + '.real');
      renameSync(target + '.link', target);
      renameSync(target, target + '.link');
      renameSync(target + '.real', target);
      n++;
    } catch {}
  }
  setImmediate(swap);
};
swap();`;

/**
 * Starts swapping the real directory `dir` with a symlink to `linkTarget` (kept as `<dir>.link` while the
 * real one is in place): `dir` is, by turns, the directory, missing, and the symlink.
 */
export function startDirectorySwapper(dir: string, linkTarget: string, mode: SwapMode): DirectorySwapper {
  symlinkSync(linkTarget, `${dir}.link`);
  const child: ChildProcess =
    mode === 'mv'
      ? spawn('bash', ['-c', MV_LOOP, 'swapper', dir], { cwd: path.dirname(dir), stdio: ['ignore', 'pipe', 'ignore'] })
      : spawn(process.execPath, ['-e', RENAME_LOOP, dir], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  // 'close': the process has exited and its stdout pipe is closed.
  const exited = once(child, 'close');
  return {
    async stop() {
      child.kill('SIGTERM');
      await exited;
      // Put the real directory back under its name, wherever the loop stopped.
      if (existsSync(`${dir}.real`)) {
        if (lstatSync(dir, { throwIfNoEntry: false })?.isSymbolicLink()) renameSync(dir, `${dir}.link`);
        renameSync(`${dir}.real`, dir);
      }
      return Number(out.trim()) || 0;
    },
  };
}

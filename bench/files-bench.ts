import { constants, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readTool } from '../src/runtime/tools/builtin/read.js';
import type { ToolContext } from '../src/runtime/tools/define-tool.js';
import { pinDirectory, WorkspaceDirectory } from '../src/runtime/workspace/workspace-directory.js';
import { WorkspaceFiles } from '../src/runtime/workspace/workspace-files.js';
import { numberFlag, type BenchArgs } from './bench-args.js';
import { round } from './bench-stats.js';

/** The file every variant opens: five components below the workspace. */
const DEPTH5 = 'a/b/c/d/file.txt';
const WARMUP_CALLS = 300;

type Variant = () => Promise<void>;

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/**
 * `files`: what confinement by what was opened costs a file tool. Per call (µs, median of interleaved rounds): a
 * plain open of the depth-5 file by name with fstat and close (no confinement at all: the floor), the confined
 * open (`WorkspaceFiles.open`: the walk from the held workspace descriptor, then the O_NOFOLLOW open) with
 * fstat and close, the walk alone, and a whole `read` tool call of that file. `confined_added_us` is the
 * confined open less the plain one. [--calls N per round (default 1000)] [--rounds N (default 15)]
 */
export async function runFilesBench(args: BenchArgs): Promise<Record<string, unknown>> {
  const calls = Math.round(numberFlag(args, 'calls', 1000));
  const rounds = Math.round(numberFlag(args, 'rounds', 15));
  const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'a3s-files-bench-')));
  const root = path.join(base, 'ws');
  mkdirSync(path.join(root, path.dirname(DEPTH5)), { recursive: true });
  writeFileSync(path.join(root, DEPTH5), Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n'));
  const directory = new WorkspaceDirectory(pinDirectory(root));
  // A run holds the workspace descriptor while its calls run; each call takes (and returns) a lease of it.
  const held = directory.acquire();
  const context = (): ToolContext => ({
    workspace: root,
    files: new WorkspaceFiles(directory),
    signal: new AbortController().signal,
    sessionId: 'bench',
    toolCallId: 'call',
    onOutput: () => undefined,
  });
  const variants: Record<string, Variant> = {
    plain_open_us: async () => {
      const handle = await open(path.join(root, DEPTH5), constants.O_RDONLY | constants.O_NONBLOCK);
      await handle.stat();
      await handle.close();
    },
    confined_open_us: async () => {
      const files = new WorkspaceFiles(directory);
      try {
        const { handle } = await files.open(DEPTH5, constants.O_RDONLY);
        await handle.stat();
        await handle.close();
      } finally {
        files.release();
      }
    },
    walk_only_us: async () => {
      const files = new WorkspaceFiles(directory);
      files.locate(DEPTH5).close();
      files.release();
    },
    read_tool_us: async () => {
      const ctx = context();
      try {
        const result = await readTool.execute({ file_path: DEPTH5 }, ctx);
        if (result.exitCode !== 0) throw new Error(result.output);
      } finally {
        ctx.files.release();
      }
    },
  };
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  try {
    for (const variant of Object.values(variants)) for (let i = 0; i < WARMUP_CALLS; i += 1) await variant();
    // Interleaved rounds: load from elsewhere on the machine falls on every variant alike.
    for (let r = 0; r < rounds; r += 1) {
      for (const [name, variant] of Object.entries(variants)) {
        const started = process.hrtime.bigint();
        for (let i = 0; i < calls; i += 1) await variant();
        samples[name]?.push(Number(process.hrtime.bigint() - started) / calls / 1000);
      }
    }
  } finally {
    held.release();
    rmSync(base, { recursive: true, force: true });
  }
  const figures = Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, round(median(values), 1)]));
  return {
    bench: 'files',
    path: DEPTH5,
    calls,
    rounds,
    ...figures,
    confined_added_us: round((figures.confined_open_us as number) - (figures.plain_open_us as number), 1),
  };
}

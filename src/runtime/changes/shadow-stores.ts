import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import type { ServerSandbox } from '../sandbox/session-commands.js';
import type { PreparedCommand } from '../sandbox/sandbox.js';
import { SandboxHomes } from '../sandbox/sandbox-homes.js';
import { KeyedLock } from '../../stores/keyed-lock.js';
import type { WorkspaceAccess } from '../workspace/workspace-directory.js';
import {
  CAPTURE_GIT_ENV,
  CAPTURE_SCRIPT,
  CHECKOUT_SCRIPT,
  CLEAR_SCRIPT,
  DIFF_SCRIPT,
  RESTORE_SCRIPT,
  exclusionRules,
} from './capture-script.js';
import { CaptureError, type CapturedPatch } from './capture-error.js';
import { hostCommand, openOutputDir, readOutput, readPatch, spawnCapture } from './capture-process.js';

/** Where the shadow store is mounted inside the sandbox. */
const INSIDE = '/shadow';

/** The bounds of a capture, from config (limits.changeCaptureExclude and the fixed sizes of docs/changes.md). */
export interface CaptureBounds {
  readonly exclude: readonly string[];
  readonly maxFileBytes: number;
  readonly maxFiles: number;
  /** The largest patch kept (larger: only its digest and size). */
  readonly maxPatchBytes: number;
}

/** The session a capture is for: where its store is, its pinned workspace and whether it may run on the host. */
export interface CaptureTarget {
  readonly tenantId: string;
  readonly sessionId: string;
  readonly workspace: WorkspaceAccess;
  /** The session may run commands on the host (no bwrap, a host_direct creator): capture runs git there, hardened alike. */
  readonly hostCommands: boolean;
}

/** How a script's command binds the workspace and the store (default: the workspace read-only, the store read-write). */
interface RunMode {
  readonly workspaceWritable?: boolean;
  readonly storeReadOnly?: boolean;
}

/** What one run of the script left in the store's output directory, read back. */
export interface CaptureFiles {
  readonly outputs: Readonly<Record<string, Buffer>>;
  readonly patch: CapturedPatch | undefined;
}

/**
 * The shadow git stores of sessions: `<data_dir>/changes/<sha256 of tenant and session>/git`, a bare git dir with
 * its own index (git's stat cache), outside every workspace. Git runs in the bwrap sandbox (the workspace read-only,
 * the store read-write, no network), or, for a session allowed host commands on a server without bwrap, on the host
 * with the same hardening. A node-local cache: removed with the session (close for good, purge).
 */
export class ShadowStores {
  private readonly homes: SandboxHomes;
  /** One script at a time per store: a range's diff and a capture never share the index or the output files. */
  private readonly lock = new KeyedLock();

  constructor(
    dir: string,
    private readonly sandbox: ServerSandbox,
    private readonly bounds: CaptureBounds,
  ) {
    this.homes = new SandboxHomes(dir, sandbox.runAs);
  }

  /** Whether captures for this target can run at all (bwrap, or host commands allowed). */
  canCapture(target: CaptureTarget): boolean {
    return this.sandbox.sandbox.prepareServerCommand !== undefined || target.hostCommands;
  }

  /** Capture the workspace into the store; `base` given: also the diff from it (patch, numstat, raw, sizes, ctimes). */
  async capture(target: CaptureTarget, base?: string): Promise<{ tree: string; files: CaptureFiles }> {
    const { maxFileBytes, maxFiles } = this.bounds;
    const names = ['excluded', 'big', ...(base ? ['numstat', 'raw', 'sizes', 'ctimes'] : [])];
    const { files, stdout } = await this.run(
      target,
      CAPTURE_SCRIPT,
      (hidden) => [
        base ? 'result' : 'base',
        String(maxFileBytes),
        String(maxFiles),
        base ?? '-',
        ...exclusionRules(this.patterns(hidden)).prune,
      ],
      'out',
      names,
      base !== undefined,
    );
    const tree = stdout.trim();
    if (!/^[0-9a-f]{40,64}$/.test(tree)) throw new CaptureError('failed', 'git write-tree gave no tree');
    return { tree, files };
  }

  /** The diff between two trees this node's store holds; CaptureError `tree_missing` when it holds either not. */
  async diff(target: CaptureTarget, from: string, to: string): Promise<CaptureFiles> {
    const { files } = await this.run(target, DIFF_SCRIPT, () => [from, to], 'range', ['numstat', 'raw', 'sizes'], true);
    return files;
  }

  /**
   * A revert's plan: the workspace captured now (`current`), the raw diff from `expected` to it (what was changed
   * since the last capture) and from it to `goal` (what the restore would write). CaptureError `tree_missing` when
   * the store does not hold both trees.
   */
  async plan(
    target: CaptureTarget,
    expected: string,
    goal: string,
  ): Promise<{ current: string; conflicts: Buffer; plan: Buffer }> {
    const { maxFileBytes, maxFiles } = this.bounds;
    const { files, stdout } = await this.run(
      target,
      CAPTURE_SCRIPT,
      (hidden) => [
        'plan',
        String(maxFileBytes),
        String(maxFiles),
        `${expected}:${goal}`,
        ...exclusionRules(this.patterns(hidden)).prune,
      ],
      'out',
      ['conflicts', 'plan'],
      false,
    );
    const current = stdout.trim();
    if (!/^[0-9a-f]{40,64}$/.test(current)) throw new CaptureError('failed', 'git write-tree gave no tree');
    const empty = Buffer.alloc(0);
    return { current, conflicts: files.outputs.conflicts ?? empty, plan: files.outputs.plan ?? empty };
  }

  /**
   * Write the workspace (bound read-write for this one command): remove `remove` (paths of `current`), then check
   * out `checkout` from `goal`. The lists go to files in the store, NUL-separated.
   */
  async restore(
    target: CaptureTarget,
    current: string,
    goal: string,
    lists: { checkout: readonly string[]; remove: readonly string[] },
  ): Promise<void> {
    const store = await this.homes.ensure(target.tenantId, target.sessionId);
    for (const name of ['checkout', 'remove'] as const) {
      // Opened without following a link: the store is the server's, a name in it is never followed elsewhere.
      const file = await open(
        path.join(store, name),
        constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
        0o644,
      );
      try {
        await file.writeFile(lists[name].map((entry) => `${entry}\0`).join(''));
      } finally {
        await file.close();
      }
    }
    await this.run(target, RESTORE_SCRIPT, () => [current, goal], 'out', [], false, { workspaceWritable: true });
  }

  /**
   * A fork's copy (docs/fork.md): write the tree `tree` of `source`'s store into the empty directory `into` (bound
   * read-write, the store read-only) with `git read-tree` and `checkout-index` over an index in the command's own
   * /tmp. CaptureError `tree_missing` when the store does not hold the tree; on any failure the script empties
   * `into` again (inside the sandbox).
   */
  async checkout(source: CaptureTarget, tree: string, into: WorkspaceAccess): Promise<void> {
    await this.run({ ...source, workspace: into }, CHECKOUT_SCRIPT, () => [tree], 'out', [], false, {
      workspaceWritable: true,
      storeReadOnly: true,
    });
  }

  /** Empty the directory `into` (a fork's copy that could not become a session), inside the sandbox. */
  async clear(source: CaptureTarget, into: WorkspaceAccess): Promise<void> {
    await this.run({ ...source, workspace: into }, CLEAR_SCRIPT, () => [], 'out', [], false, {
      workspaceWritable: true,
      storeReadOnly: true,
    });
  }

  /** Remove a session's store (the session was closed for good or purged). */
  remove(tenantId: string, sessionId: string): Promise<void> {
    return this.homes.remove(tenantId, sessionId);
  }

  /** The host path of a session's store. */
  pathOf(tenantId: string, sessionId: string): string {
    return this.homes.pathOf(tenantId, sessionId);
  }

  private patterns(hidden: readonly string[]): string[] {
    return [...this.bounds.exclude, ...hidden.map((dir) => `/${dir}/`)];
  }

  private run(
    target: CaptureTarget,
    script: string,
    argsFor: (hidden: readonly string[]) => string[],
    outDir: string,
    names: readonly string[],
    withPatch: boolean,
    mode: RunMode = {},
  ): Promise<{ stdout: string; files: CaptureFiles }> {
    return this.lock.run(this.pathOf(target.tenantId, target.sessionId), () =>
      this.runLocked(target, script, argsFor, outDir, names, withPatch, mode),
    );
  }

  private async runLocked(
    target: CaptureTarget,
    script: string,
    argsFor: (hidden: readonly string[]) => string[],
    outDir: string,
    names: readonly string[],
    withPatch: boolean,
    mode: RunMode,
  ): Promise<{ stdout: string; files: CaptureFiles }> {
    if (!this.canCapture(target))
      throw new CaptureError(
        'commands_refused',
        'commands are refused in this session (no sandbox and no host_direct creator): no change capture',
      );
    const lease = target.workspace.acquire();
    try {
      const store = await this.homes.ensure(target.tenantId, target.sessionId);
      const hidden = (lease.hidden ?? []).map((dir) => path.relative(lease.path, dir)).filter((rel) => rel !== '');
      const argv = ['/bin/sh', '-c', script, 'capture', ...argsFor(hidden)];
      const server = this.sandbox.sandbox.prepareServerCommand;
      const prepared: PreparedCommand = server
        ? await server.call(this.sandbox.sandbox, {
            argv,
            workspace: lease.path,
            workspaceFd: lease.fd,
            ...(mode.workspaceWritable ? { workspaceWritable: true } : {}),
            ...(mode.storeReadOnly ? { storeReadOnly: true } : {}),
            ...(lease.hidden ? { hidden: lease.hidden } : {}),
            writable: { host: store, inside: INSIDE },
            env: { ...CAPTURE_GIT_ENV, A3S_SHADOW: INSIDE, A3S_WS: lease.path },
          })
        : hostCommand(argv, store);
      const { code, stdout, stderr } = await spawnCapture(prepared, lease.fd);
      if (code === 3) throw new CaptureError('too_many_files', stderr.trim() || 'too many files');
      if (code === 4) throw new CaptureError('tree_missing', 'this node does not hold both trees');
      if (code !== 0) throw new CaptureError('failed', `git exited ${code ?? 'on a signal'}: ${stderr.trim()}`);
      if (names.length === 0 && !withPatch) return { stdout, files: { outputs: {}, patch: undefined } };
      const dir = await openOutputDir(path.join(store, outDir));
      try {
        const outputs: Record<string, Buffer> = {};
        for (const name of names) outputs[name] = await readOutput(dir, name);
        const patch = withPatch ? await readPatch(dir, this.bounds.maxPatchBytes) : undefined;
        return { stdout, files: { outputs, patch } };
      } finally {
        await dir.close();
      }
    } finally {
      lease.release();
    }
  }
}

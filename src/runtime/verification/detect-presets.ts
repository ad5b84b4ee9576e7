import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import type { VerificationPreset, VerificationPresetCommand } from '../../protocol/verification.js';
import { fdPath } from '../workspace/confined-walk.js';
import type { WorkspaceAccess } from '../workspace/workspace-directory.js';
import { readAt } from '../workspace/regular-file.js';
import { WorkspaceFiles } from '../workspace/workspace-files.js';

/** Manifests larger than this are ignored (bounded everything). */
const MAX_MANIFEST_BYTES = 1024 * 1024;
/** A `packageManager` name we put into a command; anything else falls back to lock-file detection. */
const PACKAGE_MANAGER_NAME = /^[a-z][a-z0-9-]{0,31}$/;
/** A manifest is opened in the held workspace directory, never through a symlink, never waiting on a FIFO. */
const MANIFEST_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * The workspace's top-level entries, reached through the held workspace descriptor (a lease of the pinned
 * directory): a name swapped for a symlink, or the workspace itself swapped, cannot lead elsewhere.
 */
class WorkspaceTop {
  constructor(private readonly fd: number) {}

  /** The content of a regular file directly in the workspace, or undefined (missing, symlink, FIFO, too big, unreadable). */
  async manifest(name: string): Promise<string | undefined> {
    let handle;
    try {
      handle = await open(fdPath(this.fd, name), MANIFEST_FLAGS);
      // fstat of what was opened: only a regular file of bounded size is read (one byte past the bound refuses a growing one).
      const info = await handle.stat();
      if (!info.isFile() || info.size > MAX_MANIFEST_BYTES) return undefined;
      const bytes = await readAt(handle, 0, MAX_MANIFEST_BYTES + 1);
      return bytes.length > MAX_MANIFEST_BYTES ? undefined : bytes.toString('utf8');
    } catch {
      return undefined;
    } finally {
      await handle?.close().catch(() => undefined);
    }
  }

  /** True when the entry is there and of that kind (lstat: a symlink is neither). */
  async exists(name: string, kind: 'file' | 'dir'): Promise<boolean> {
    try {
      const info = await lstat(fdPath(this.fd, name));
      return kind === 'file' ? info.isFile() : info.isDirectory();
    } catch {
      return false;
    }
  }
}

function command(
  id: string,
  kind: string,
  description: string,
  text: string,
  required: boolean,
): VerificationPresetCommand {
  return { id, kind, description, command: text, required, expect_exit: 0 };
}

async function rustPreset(top: WorkspaceTop): Promise<VerificationPreset | undefined> {
  if (!(await top.exists('Cargo.toml', 'file'))) return undefined;
  return {
    id: 'rust-default',
    project_kind: 'rust',
    description: 'Rust cargo verification',
    commands: [
      command('rust:fmt', 'format', 'Check Rust formatting', 'cargo fmt -- --check', true),
      command('rust:check', 'type_check', 'Run Rust type checking', 'cargo check', true),
      command('rust:test', 'test', 'Run Rust tests', 'cargo test', true),
      command('rust:clippy', 'lint', 'Run Rust clippy lints', 'cargo clippy -- -D warnings', false),
    ],
  };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

async function packageManager(top: WorkspaceTop, pkg: Record<string, unknown>): Promise<string> {
  const declared = typeof pkg.packageManager === 'string' ? pkg.packageManager.split('@')[0] : undefined;
  if (declared !== undefined && pkg.packageManager !== declared && PACKAGE_MANAGER_NAME.test(declared)) return declared;
  if (await top.exists('pnpm-lock.yaml', 'file')) return 'pnpm';
  if (await top.exists('yarn.lock', 'file')) return 'yarn';
  if ((await top.exists('bun.lockb', 'file')) || (await top.exists('bun.lock', 'file'))) return 'bun';
  return 'npm';
}

function scriptCommand(manager: string, script: string): string {
  if (manager === 'pnpm' || manager === 'yarn') return `${manager} ${script}`;
  if (manager === 'bun') return `bun run ${script}`;
  if (manager === 'npm') return script === 'test' ? 'npm test' : `npm run ${script}`;
  return `${manager} run ${script}`;
}

const NODE_SCRIPTS = [
  { script: 'test', kind: 'test', description: 'Run JavaScript tests', required: true },
  { script: 'typecheck', kind: 'type_check', description: 'Run JavaScript type checks', required: false },
  { script: 'lint', kind: 'lint', description: 'Run JavaScript lint checks', required: false },
] as const;

async function nodePreset(top: WorkspaceTop): Promise<VerificationPreset | undefined> {
  const text = await top.manifest('package.json');
  const pkg = text === undefined ? undefined : parseObject(text);
  const scripts = pkg?.scripts;
  if (!pkg || typeof scripts !== 'object' || scripts === null || Array.isArray(scripts)) return undefined;
  const manager = await packageManager(top, pkg);
  const commands = NODE_SCRIPTS.filter(({ script }) => Object.hasOwn(scripts, script)).map(
    ({ script, kind, description, required }) =>
      command(`node:${script}`, kind, description, scriptCommand(manager, script), required),
  );
  return commands.length > 0
    ? { id: 'node-default', project_kind: 'node', description: 'Node.js package verification', commands }
    : undefined;
}

async function pythonPreset(top: WorkspaceTop): Promise<VerificationPreset | undefined> {
  const pyproject = (await top.manifest('pyproject.toml')) ?? '';
  const pytestIni = await top.exists('pytest.ini', 'file');
  if (!(await top.exists('pyproject.toml', 'file')) && !pytestIni) return undefined;
  const commands: VerificationPresetCommand[] = [];
  if ((await top.exists('tests', 'dir')) || pyproject.includes('[tool.pytest') || pytestIni) {
    commands.push(command('python:test', 'test', 'Run Python tests', 'python -m pytest', true));
  }
  if (
    (await top.exists('ruff.toml', 'file')) ||
    (await top.exists('.ruff.toml', 'file')) ||
    pyproject.includes('[tool.ruff')
  ) {
    commands.push(command('python:ruff', 'lint', 'Run Ruff lint checks', 'python -m ruff check .', false));
  }
  if (
    (await top.exists('mypy.ini', 'file')) ||
    (await top.exists('.mypy.ini', 'file')) ||
    pyproject.includes('[tool.mypy')
  ) {
    commands.push(command('python:mypy', 'type_check', 'Run mypy type checking', 'python -m mypy .', false));
  }
  return commands.length > 0
    ? { id: 'python-default', project_kind: 'python', description: 'Python project verification', commands }
    : undefined;
}

async function goPreset(top: WorkspaceTop): Promise<VerificationPreset | undefined> {
  if (!(await top.exists('go.mod', 'file'))) return undefined;
  return {
    id: 'go-default',
    project_kind: 'go',
    description: 'Go module verification',
    commands: [
      command('go:test', 'test', 'Run Go tests', 'go test ./...', true),
      command('go:vet', 'lint', 'Run go vet', 'go vet ./...', false),
    ],
  };
}

/**
 * The seed's verification presets for a session's workspace, from the files at its root (Cargo.toml,
 * package.json scripts, pyproject.toml/pytest.ini, go.mod, in that order), read through a lease of the pinned
 * workspace directory that is returned before this answers. Reads files only and never runs anything; a
 * symlinked, non-regular or oversized manifest contributes nothing, and a workspace that is no longer the
 * pinned directory has no presets.
 */
export async function detectPresets(workspace: WorkspaceAccess): Promise<VerificationPreset[]> {
  const files = new WorkspaceFiles(workspace);
  try {
    const top = new WorkspaceTop(files.root().fd);
    const found = await Promise.all([rustPreset(top), nodePreset(top), pythonPreset(top), goPreset(top)]);
    return found.filter((preset): preset is VerificationPreset => preset !== undefined);
  } catch {
    return [];
  } finally {
    files.release();
  }
}

/** Collapse whitespace runs and trim, so "npm  test " and "npm test" compare equal. */
export function normalizeCommand(command: string): string {
  return command.replace(/\s+/g, ' ').trim();
}

/** The seed's coverage rule: `command` runs `preset` exactly, with trailing arguments, or after `&&` / `;`. */
export function commandCoversPreset(command: string, preset: string): boolean {
  const cmd = normalizeCommand(command);
  const want = normalizeCommand(preset);
  if (cmd === '' || want === '') return false;
  if (cmd === want || cmd.startsWith(`${want} `)) return true;
  return [`&& ${want}`, `; ${want}`].some((joined) => cmd.includes(`${joined} `) || cmd.endsWith(joined));
}

/** The first preset command a shell command covers (how a bash call running a preset is recognised). */
export function matchPresetCommand(
  command: string,
  presets: readonly VerificationPreset[],
): VerificationPresetCommand | undefined {
  return presets
    .flatMap((preset) => preset.commands)
    .find((candidate) => commandCoversPreset(command, candidate.command));
}

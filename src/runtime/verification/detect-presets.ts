import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { VerificationPreset, VerificationPresetCommand } from '../../protocol/verification.js';
import { fdPath, locate, type ConfinedRoot } from '../workspace/confined-walk.js';
import { openHeldDirectory } from '../workspace/held-directory.js';
import { readBounded } from '../workspace/read-confined-file.js';

/** Manifests larger than this are ignored (bounded everything). */
const MAX_MANIFEST_BYTES = 1024 * 1024;
/** A `packageManager` name we put into a command; anything else falls back to lock-file detection. */
const PACKAGE_MANAGER_NAME = /^[a-z][a-z0-9-]{0,31}$/;

const NOFOLLOW_READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** lstat of an entry directly in the workspace (never followed), or undefined. */
function entry(workspace: ConfinedRoot, name: string) {
  try {
    const location = locate(workspace, name, { followFinal: false });
    location.close();
    return location.stats ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * The content of a regular file directly in the workspace, or undefined (missing, symlink, too big, unreadable):
 * opened from the held workspace directory without following a symlink, checked with fstat.
 */
async function readManifest(workspace: ConfinedRoot, name: string): Promise<string | undefined> {
  try {
    const handle = await open(fdPath(workspace.fd, name), NOFOLLOW_READ);
    try {
      const info = await handle.stat();
      if (!info.isFile() || info.size > MAX_MANIFEST_BYTES) return undefined;
      const { bytes, truncated } = await readBounded(handle, MAX_MANIFEST_BYTES);
      return truncated ? undefined : bytes.toString('utf8');
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
}

function exists(workspace: ConfinedRoot, name: string, kind: 'file' | 'dir'): boolean {
  const info = entry(workspace, name);
  return info !== undefined && (kind === 'file' ? info.isFile() : info.isDirectory());
}

function command(id: string, kind: string, description: string, text: string, required: boolean): VerificationPresetCommand {
  return { id, kind, description, command: text, required, expect_exit: 0 };
}

async function rustPreset(workspace: ConfinedRoot): Promise<VerificationPreset | undefined> {
  if (!exists(workspace, 'Cargo.toml', 'file')) return undefined;
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
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

async function packageManager(workspace: ConfinedRoot, pkg: Record<string, unknown>): Promise<string> {
  const declared = typeof pkg.packageManager === 'string' ? pkg.packageManager.split('@')[0] : undefined;
  if (declared !== undefined && pkg.packageManager !== declared && PACKAGE_MANAGER_NAME.test(declared)) return declared;
  if (exists(workspace, 'pnpm-lock.yaml', 'file')) return 'pnpm';
  if (exists(workspace, 'yarn.lock', 'file')) return 'yarn';
  if (exists(workspace, 'bun.lockb', 'file') || exists(workspace, 'bun.lock', 'file')) return 'bun';
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

async function nodePreset(workspace: ConfinedRoot): Promise<VerificationPreset | undefined> {
  const text = await readManifest(workspace, 'package.json');
  const pkg = text === undefined ? undefined : parseObject(text);
  const scripts = pkg?.scripts;
  if (!pkg || typeof scripts !== 'object' || scripts === null || Array.isArray(scripts)) return undefined;
  const manager = await packageManager(workspace, pkg);
  const commands = NODE_SCRIPTS.filter(({ script }) => Object.hasOwn(scripts, script)).map(({ script, kind, description, required }) =>
    command(`node:${script}`, kind, description, scriptCommand(manager, script), required),
  );
  return commands.length > 0 ? { id: 'node-default', project_kind: 'node', description: 'Node.js package verification', commands } : undefined;
}

async function pythonPreset(workspace: ConfinedRoot): Promise<VerificationPreset | undefined> {
  const pyproject = (await readManifest(workspace, 'pyproject.toml')) ?? '';
  const pytestIni = exists(workspace, 'pytest.ini', 'file');
  if (!exists(workspace, 'pyproject.toml', 'file') && !pytestIni) return undefined;
  const commands: VerificationPresetCommand[] = [];
  if (exists(workspace, 'tests', 'dir') || pyproject.includes('[tool.pytest') || pytestIni) {
    commands.push(command('python:test', 'test', 'Run Python tests', 'python -m pytest', true));
  }
  if (exists(workspace, 'ruff.toml', 'file') || exists(workspace, '.ruff.toml', 'file') || pyproject.includes('[tool.ruff')) {
    commands.push(command('python:ruff', 'lint', 'Run Ruff lint checks', 'python -m ruff check .', false));
  }
  if (exists(workspace, 'mypy.ini', 'file') || exists(workspace, '.mypy.ini', 'file') || pyproject.includes('[tool.mypy')) {
    commands.push(command('python:mypy', 'type_check', 'Run mypy type checking', 'python -m mypy .', false));
  }
  return commands.length > 0 ? { id: 'python-default', project_kind: 'python', description: 'Python project verification', commands } : undefined;
}

async function goPreset(workspace: ConfinedRoot): Promise<VerificationPreset | undefined> {
  if (!exists(workspace, 'go.mod', 'file')) return undefined;
  return {
    id: 'go-default',
    project_kind: 'go',
    description: 'Go module verification',
    commands: [command('go:test', 'test', 'Run Go tests', 'go test ./...', true), command('go:vet', 'lint', 'Run go vet', 'go vet ./...', false)],
  };
}

/**
 * The seed's verification presets for a workspace, from the files at its root (Cargo.toml, package.json
 * scripts, pyproject.toml/pytest.ini, go.mod, in that order). Reads files only and never runs anything;
 * a symlinked or oversized manifest contributes nothing. Every file is opened from the workspace directory
 * held open, never through a symbolic link.
 */
export async function detectPresets(workspace: string): Promise<VerificationPreset[]> {
  let held;
  try {
    // Opened by its canonical path and checked to be there: a workspace swapped for a symlink gives no presets.
    held = openHeldDirectory(workspace);
  } catch {
    return [];
  }
  try {
    const found = await Promise.all([rustPreset(held), nodePreset(held), pythonPreset(held), goPreset(held)]);
    return found.filter((preset): preset is VerificationPreset => preset !== undefined);
  } finally {
    held.close();
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
export function matchPresetCommand(command: string, presets: readonly VerificationPreset[]): VerificationPresetCommand | undefined {
  return presets.flatMap((preset) => preset.commands).find((candidate) => commandCoversPreset(command, candidate.command));
}

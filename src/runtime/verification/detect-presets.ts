import { lstat, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { VerificationPreset, VerificationPresetCommand } from '../../protocol/verification.js';

/** Manifests larger than this are ignored (bounded everything). */
const MAX_MANIFEST_BYTES = 1024 * 1024;
/** A `packageManager` name we put into a command; anything else falls back to lock-file detection. */
const PACKAGE_MANAGER_NAME = /^[a-z][a-z0-9-]{0,31}$/;

/** The content of a regular file directly in the workspace, or undefined (missing, symlink, too big, unreadable). */
async function readManifest(workspace: string, name: string): Promise<string | undefined> {
  const file = path.join(workspace, name);
  try {
    // lstat: a symlinked manifest could point outside the workspace; presets never follow it.
    const info = await lstat(file);
    if (!info.isFile() || info.size > MAX_MANIFEST_BYTES) return undefined;
    return await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}

async function exists(workspace: string, name: string, kind: 'file' | 'dir'): Promise<boolean> {
  try {
    const info = await lstat(path.join(workspace, name));
    return kind === 'file' ? info.isFile() : info.isDirectory();
  } catch {
    return false;
  }
}

function command(id: string, kind: string, description: string, text: string, required: boolean): VerificationPresetCommand {
  return { id, kind, description, command: text, required, expect_exit: 0 };
}

async function rustPreset(workspace: string): Promise<VerificationPreset | undefined> {
  if (!(await exists(workspace, 'Cargo.toml', 'file'))) return undefined;
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

async function packageManager(workspace: string, pkg: Record<string, unknown>): Promise<string> {
  const declared = typeof pkg.packageManager === 'string' ? pkg.packageManager.split('@')[0] : undefined;
  if (declared !== undefined && pkg.packageManager !== declared && PACKAGE_MANAGER_NAME.test(declared)) return declared;
  if (await exists(workspace, 'pnpm-lock.yaml', 'file')) return 'pnpm';
  if (await exists(workspace, 'yarn.lock', 'file')) return 'yarn';
  if ((await exists(workspace, 'bun.lockb', 'file')) || (await exists(workspace, 'bun.lock', 'file'))) return 'bun';
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

async function nodePreset(workspace: string): Promise<VerificationPreset | undefined> {
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

async function pythonPreset(workspace: string): Promise<VerificationPreset | undefined> {
  const pyproject = (await readManifest(workspace, 'pyproject.toml')) ?? '';
  const pytestIni = await exists(workspace, 'pytest.ini', 'file');
  if (!(await exists(workspace, 'pyproject.toml', 'file')) && !pytestIni) return undefined;
  const commands: VerificationPresetCommand[] = [];
  if ((await exists(workspace, 'tests', 'dir')) || pyproject.includes('[tool.pytest') || pytestIni) {
    commands.push(command('python:test', 'test', 'Run Python tests', 'python -m pytest', true));
  }
  if ((await exists(workspace, 'ruff.toml', 'file')) || (await exists(workspace, '.ruff.toml', 'file')) || pyproject.includes('[tool.ruff')) {
    commands.push(command('python:ruff', 'lint', 'Run Ruff lint checks', 'python -m ruff check .', false));
  }
  if ((await exists(workspace, 'mypy.ini', 'file')) || (await exists(workspace, '.mypy.ini', 'file')) || pyproject.includes('[tool.mypy')) {
    commands.push(command('python:mypy', 'type_check', 'Run mypy type checking', 'python -m mypy .', false));
  }
  return commands.length > 0 ? { id: 'python-default', project_kind: 'python', description: 'Python project verification', commands } : undefined;
}

async function goPreset(workspace: string): Promise<VerificationPreset | undefined> {
  if (!(await exists(workspace, 'go.mod', 'file'))) return undefined;
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
 * a symlinked or oversized manifest contributes nothing.
 */
export async function detectPresets(workspace: string): Promise<VerificationPreset[]> {
  const found = await Promise.all([rustPreset(workspace), nodePreset(workspace), pythonPreset(workspace), goPreset(workspace)]);
  return found.filter((preset): preset is VerificationPreset => preset !== undefined);
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

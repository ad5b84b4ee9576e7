import { lstat, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { VerificationKind, VerificationPreset } from '../../protocol/verification.js';

/** Manifests larger than this are ignored (bounded everything). */
const MAX_MANIFEST_BYTES = 1024 * 1024;

/** The placeholder test script of `npm init`: it always fails and tests nothing. */
const NPM_INIT_TEST = /no test specified/;

/**
 * package.json scripts that become presets, in preset order: the first script present of each row
 * is used. Formatters only in check mode: a verification must never rewrite the workspace.
 */
const SCRIPT_KINDS: ReadonlyArray<{ kind: VerificationKind; scripts: readonly string[] }> = [
  { kind: 'test', scripts: ['test'] },
  { kind: 'build', scripts: ['build'] },
  { kind: 'lint', scripts: ['lint'] },
  { kind: 'typecheck', scripts: ['typecheck', 'type-check', 'check-types', 'types', 'tsc'] },
  { kind: 'format', scripts: ['format:check', 'fmt:check', 'prettier:check', 'check-format', 'check:format'] },
];

type PackageRunner = 'npm' | 'pnpm' | 'yarn';

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

async function packageRunner(workspace: string): Promise<PackageRunner> {
  if (await exists(workspace, 'pnpm-lock.yaml', 'file')) return 'pnpm';
  if (await exists(workspace, 'yarn.lock', 'file')) return 'yarn';
  return 'npm';
}

/** A preset id (a valid check id) from a runner and a script name: "npm-format-check". */
function presetId(prefix: string, name: string): string {
  return `${prefix}-${name}`.replace(/[^A-Za-z0-9_.-]+/g, '-').slice(0, 64);
}

function scriptsOf(text: string): Record<string, string> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const scripts: unknown = (parsed as Record<string, unknown>).scripts;
  if (typeof scripts !== 'object' || scripts === null || Array.isArray(scripts)) return undefined;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(scripts)) if (typeof value === 'string' && value.trim() !== '') out[name] = value;
  return out;
}

async function packageJsonPresets(workspace: string): Promise<VerificationPreset[]> {
  const text = await readManifest(workspace, 'package.json');
  const scripts = text === undefined ? undefined : scriptsOf(text);
  if (!scripts) return [];
  const runner = await packageRunner(workspace);
  const presets: VerificationPreset[] = [];
  for (const { kind, scripts: names } of SCRIPT_KINDS) {
    const name = names.find((n) => Object.hasOwn(scripts, n));
    if (name === undefined) continue;
    if (name === 'test' && NPM_INIT_TEST.test(scripts[name])) continue;
    presets.push({
      id: presetId(runner, name),
      kind,
      description: `package.json script "${name}" (${runner})`,
      command: name === 'test' ? `${runner} test` : `${runner} run ${name}`,
      source: 'package.json',
    });
  }
  return presets;
}

async function cargoPresets(workspace: string): Promise<VerificationPreset[]> {
  const text = await readManifest(workspace, 'Cargo.toml');
  if (text === undefined || !/^\s*\[(package|workspace)\]/m.test(text)) return [];
  const preset = (id: string, kind: VerificationKind, command: string, description: string): VerificationPreset => ({ id, kind, description, command, source: 'Cargo.toml' });
  return [
    preset('cargo-test', 'test', 'cargo test', 'Rust tests (cargo test)'),
    preset('cargo-build', 'build', 'cargo build', 'Rust build (cargo build)'),
    preset('cargo-clippy', 'lint', 'cargo clippy', 'Rust lints (cargo clippy)'),
  ];
}

/** True when the TOML text has a table header `[name]` or `[name.<sub>]`. */
function hasTomlTable(text: string, name: string): boolean {
  const escaped = name.replace(/[.]/g, '\\.');
  return new RegExp(`^\\s*\\[\\s*${escaped}(\\.[^\\]]*)?\\s*\\]`, 'm').test(text);
}

async function pyprojectPresets(workspace: string): Promise<VerificationPreset[]> {
  const text = await readManifest(workspace, 'pyproject.toml');
  if (text === undefined) return [];
  const preset = (id: string, kind: VerificationKind, command: string, description: string): VerificationPreset => ({ id, kind, description, command, source: 'pyproject.toml' });
  const presets: VerificationPreset[] = [];
  const pytest = hasTomlTable(text, 'tool.pytest') || (await exists(workspace, 'pytest.ini', 'file')) || (await exists(workspace, 'tests', 'dir')) || (await exists(workspace, 'test', 'dir'));
  if (pytest) presets.push(preset('pytest', 'test', 'pytest', 'Python tests (pytest)'));
  if (hasTomlTable(text, 'tool.ruff') || (await exists(workspace, 'ruff.toml', 'file')) || (await exists(workspace, '.ruff.toml', 'file'))) {
    presets.push(preset('ruff', 'lint', 'ruff check .', 'Python lints (ruff)'));
  }
  if (hasTomlTable(text, 'tool.mypy') || (await exists(workspace, 'mypy.ini', 'file'))) presets.push(preset('mypy', 'typecheck', 'mypy .', 'Python type check (mypy)'));
  return presets;
}

async function goPresets(workspace: string): Promise<VerificationPreset[]> {
  const text = await readManifest(workspace, 'go.mod');
  if (text === undefined || !/^\s*module\s+\S+/m.test(text)) return [];
  const preset = (id: string, kind: VerificationKind, command: string, description: string): VerificationPreset => ({ id, kind, description, command, source: 'go.mod' });
  return [
    preset('go-test', 'test', 'go test ./...', 'Go tests (go test)'),
    preset('go-build', 'build', 'go build ./...', 'Go build (go build)'),
    preset('go-vet', 'lint', 'go vet ./...', 'Go static checks (go vet)'),
  ];
}

/**
 * Verification presets for a workspace, from the manifests at its root (package.json, Cargo.toml,
 * pyproject.toml, go.mod, in that order). Parses files only and never runs anything; a missing,
 * malformed, symlinked or oversized manifest contributes no presets.
 */
export async function detectPresets(workspace: string): Promise<VerificationPreset[]> {
  const groups = await Promise.all([packageJsonPresets(workspace), cargoPresets(workspace), pyprojectPresets(workspace), goPresets(workspace)]);
  return groups.flat();
}

/** Collapse whitespace runs and trim, so "npm  test " and "npm test" compare equal. */
export function normalizeCommand(command: string): string {
  return command.replace(/\s+/g, ' ').trim();
}

/** The preset whose command equals `command` up to whitespace (how a bash call running a preset is recognised). */
export function matchPreset(command: string, presets: readonly VerificationPreset[]): VerificationPreset | undefined {
  const wanted = normalizeCommand(command);
  if (wanted === '') return undefined;
  return presets.find((p) => normalizeCommand(p.command) === wanted);
}

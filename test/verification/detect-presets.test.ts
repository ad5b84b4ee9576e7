import { execFileSync } from 'node:child_process';
import { existsSync, renameSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  VerificationCheckIdSchema,
  VerificationPresetSchema,
  type VerificationPreset,
} from '../../src/protocol/verification.js';
import {
  commandCoversPreset,
  detectPresets,
  matchPresetCommand,
} from '../../src/runtime/verification/detect-presets.js';
import { presetSubject, reportForPresetRun } from '../../src/runtime/verification/preset-report.js';
import { pinDirectory, WorkspaceDirectory } from '../../src/runtime/workspace/workspace-directory.js';
import { tempWorkspace, type TempWorkspace } from './verification-fixtures.js';

const workspaces: TempWorkspace[] = [];
function workspaceDir(files: Record<string, string>): string {
  const ws = tempWorkspace(files);
  workspaces.push(ws);
  return ws.root;
}
/** A session's pinned workspace holding these files (presets are read through it, never by its name). */
function pinned(root: string): WorkspaceDirectory {
  return new WorkspaceDirectory(pinDirectory(root));
}
function workspace(files: Record<string, string>): WorkspaceDirectory {
  return pinned(workspaceDir(files));
}
afterEach(() => {
  for (const ws of workspaces.splice(0)) ws.cleanup();
});

const rows = (presets: VerificationPreset[]) =>
  presets.map((p) => [p.id, p.project_kind, p.commands.map((c) => [c.id, c.kind, c.command, c.required])]);

describe("detectPresets (the seed's presets)", () => {
  it('detects rust-default from Cargo.toml, in the seed shape {id, project_kind, description, commands}', async () => {
    const presets = await detectPresets(workspace({ 'Cargo.toml': '[package]\nname = "demo"\n' }));
    expect(rows(presets)).toEqual([
      [
        'rust-default',
        'rust',
        [
          ['rust:fmt', 'format', 'cargo fmt -- --check', true],
          ['rust:check', 'type_check', 'cargo check', true],
          ['rust:test', 'test', 'cargo test', true],
          ['rust:clippy', 'lint', 'cargo clippy -- -D warnings', false],
        ],
      ],
    ]);
    for (const preset of presets) {
      expect(VerificationPresetSchema.parse(preset)).toEqual(preset);
      for (const command of preset.commands) expect(VerificationCheckIdSchema.safeParse(command.id).success).toBe(true);
    }
  });

  it('detects node-default from declared scripts only, with the package manager of packageManager or the lockfile', async () => {
    const scripts = { test: 'vitest', lint: 'eslint .', typecheck: 'tsc --noEmit', build: 'tsc' };
    expect(rows(await detectPresets(workspace({ 'package.json': JSON.stringify({ scripts }) })))).toEqual([
      [
        'node-default',
        'node',
        [
          ['node:test', 'test', 'npm test', true],
          ['node:typecheck', 'type_check', 'npm run typecheck', false],
          ['node:lint', 'lint', 'npm run lint', false],
        ],
      ],
    ]);
    const pnpm = await detectPresets(
      workspace({
        'package.json': JSON.stringify({ packageManager: 'pnpm@9.0.0', scripts: { test: 'vitest', lint: 'eslint .' } }),
      }),
    );
    expect(pnpm[0].commands.map((c) => c.command)).toEqual(['pnpm test', 'pnpm lint']);
    const yarn = await detectPresets(
      workspace({ 'package.json': JSON.stringify({ scripts: { test: 'x' } }), 'yarn.lock': '' }),
    );
    expect(yarn[0].commands[0].command).toBe('yarn test');
    const bun = await detectPresets(
      workspace({ 'package.json': JSON.stringify({ scripts: { lint: 'x' } }), 'bun.lock': '' }),
    );
    expect(bun[0].commands[0].command).toBe('bun run lint');
    expect(
      await detectPresets(workspace({ 'package.json': JSON.stringify({ scripts: { start: 'node .' } }) })),
    ).toEqual([]);
    expect(await detectPresets(workspace({ 'package.json': '{not json' }))).toEqual([]);
  });

  it('detects python-default only with clear markers, and go-default from go.mod', async () => {
    const python = await detectPresets(workspace({ 'pyproject.toml': '[tool.pytest.ini_options]\n[tool.ruff]\n' }));
    expect(rows(python)).toEqual([
      [
        'python-default',
        'python',
        [
          ['python:test', 'test', 'python -m pytest', true],
          ['python:ruff', 'lint', 'python -m ruff check .', false],
        ],
      ],
    ]);
    expect(await detectPresets(workspace({ 'pyproject.toml': '[project]\nname = "x"\n' }))).toEqual([]);
    expect(rows(await detectPresets(workspace({ 'go.mod': 'module example.com/x\n' })))).toEqual([
      [
        'go-default',
        'go',
        [
          ['go:test', 'test', 'go test ./...', true],
          ['go:vet', 'lint', 'go vet ./...', false],
        ],
      ],
    ]);
  });

  it('ignores a symlinked manifest, returns nothing for an empty or swapped workspace, and never runs anything', async () => {
    const outside = workspaceDir({ 'package.json': JSON.stringify({ scripts: { test: 'touch ran-test' } }) });
    const root = workspaceDir({});
    symlinkSync(join(outside, 'package.json'), join(root, 'package.json'));
    expect(await detectPresets(pinned(root))).toEqual([]);
    // The workspace name swapped for a link to another workspace after the session pinned it: nothing of the other is read.
    const swapped = workspaceDir({});
    const pin = pinned(swapped);
    renameSync(swapped, `${swapped}.old`);
    symlinkSync(outside, swapped);
    expect(await detectPresets(pin)).toEqual([]);
    expect(pin.held).toBe(0);
    await detectPresets(pinned(outside));
    expect(existsSync(join(outside, 'ran-test'))).toBe(false);
  });

  it('reads a FIFO or a directory named like a manifest as nothing, without waiting', async () => {
    const root = workspaceDir({ 'go.mod': 'module x\n' });
    execFileSync('mkfifo', [join(root, 'package.json')]);
    execFileSync('mkdir', [join(root, 'pyproject.toml')]);
    const dir = pinned(root);
    expect((await detectPresets(dir)).map((preset) => preset.id)).toEqual(['go-default']);
    expect(dir.held).toBe(0);
  });
});

describe("the seed's preset coverage rule", () => {
  it('covers the exact command, trailing arguments, and a command after && or ;', () => {
    expect(commandCoversPreset('npm  test ', 'npm test')).toBe(true);
    expect(commandCoversPreset('npm test -- --run', 'npm test')).toBe(true);
    expect(commandCoversPreset('cd app && npm test', 'npm test')).toBe(true);
    expect(commandCoversPreset('cd app; npm test --silent', 'npm test')).toBe(true);
    expect(commandCoversPreset('npm testing', 'npm test')).toBe(false);
    expect(commandCoversPreset('echo npm test', 'npm test')).toBe(false);
    expect(commandCoversPreset('', 'npm test')).toBe(false);
  });

  it('attaches a one-check report with subject shell:<command id> from the call outcome', async () => {
    const presets = await detectPresets(workspace({ 'go.mod': 'module x\n' }));
    const command = matchPresetCommand('go vet ./... && echo done', presets);
    expect(command?.id).toBe('go:vet');
    expect(matchPresetCommand('go build', presets)).toBeUndefined();
    const report = reportForPresetRun(
      command!,
      {
        output: 'vet: bad',
        exitCode: 1,
        timedOut: false,
        truncated: false,
        startedAtMs: 10,
        durationMs: 5,
        timeoutMs: 1000,
      },
      { newId: () => 'verif_1', sessionId: 's' },
    );
    expect(presetSubject(command!)).toBe('shell:go:vet');
    expect(report).toMatchObject({ subject: 'shell:go:vet', status: 'failed', created_at_ms: 10 });
    expect(report.checks[0]).toMatchObject({
      id: 'go:vet',
      required: false,
      status: 'failed',
      suggested_tools: ['bash'],
      residual_risk: 'verification command exited with code 1, expected 0: go vet ./...',
    });
  });
});

import { existsSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VerificationCheckIdSchema, VerificationPresetSchema, type VerificationPreset } from '../../src/protocol/verification.js';
import { detectPresets, matchPreset } from '../../src/runtime/verification/detect-presets.js';
import { tempWorkspace, type TempWorkspace } from './verification-fixtures.js';

const workspaces: TempWorkspace[] = [];
function workspace(files: Record<string, string>): string {
  const ws = tempWorkspace(files);
  workspaces.push(ws);
  return ws.root;
}
afterEach(() => {
  for (const ws of workspaces.splice(0)) ws.cleanup();
});

const NODE_PACKAGE = JSON.stringify({
  name: 'app',
  scripts: { test: 'vitest run', build: 'tsc -p .', lint: 'eslint .', typecheck: 'tsc --noEmit', 'format:check': 'prettier --check .', format: 'prettier --write .', start: 'node .' },
});

function commands(presets: VerificationPreset[]): Array<[string, string, string, string]> {
  return presets.map((p) => [p.id, p.kind, p.command, p.source]);
}

describe('detectPresets', () => {
  it('reads package.json scripts of a Node workspace (npm by default), never a writing formatter', async () => {
    const presets = await detectPresets(workspace({ 'package.json': NODE_PACKAGE, 'package-lock.json': '{}' }));
    expect(commands(presets)).toEqual([
      ['npm-test', 'test', 'npm test', 'package.json'],
      ['npm-build', 'build', 'npm run build', 'package.json'],
      ['npm-lint', 'lint', 'npm run lint', 'package.json'],
      ['npm-typecheck', 'typecheck', 'npm run typecheck', 'package.json'],
      ['npm-format-check', 'format', 'npm run format:check', 'package.json'],
    ]);
    for (const preset of presets) {
      expect(VerificationPresetSchema.parse(preset)).toEqual(preset);
      // A preset id is a valid check id, so presets can be posted as verification commands as they are.
      expect(VerificationCheckIdSchema.safeParse(preset.id).success).toBe(true);
    }
    expect(presets[0].description).toBe('package.json script "test" (npm)');
  });

  it('chooses pnpm or yarn from the lockfile', async () => {
    const scripts = JSON.stringify({ scripts: { test: 'jest', build: 'rollup -c', lint: 'eslint .', tsc: 'tsc --noEmit' } });
    expect(commands(await detectPresets(workspace({ 'package.json': scripts, 'pnpm-lock.yaml': 'lockfileVersion: 9\n' })))).toEqual([
      ['pnpm-test', 'test', 'pnpm test', 'package.json'],
      ['pnpm-build', 'build', 'pnpm run build', 'package.json'],
      ['pnpm-lint', 'lint', 'pnpm run lint', 'package.json'],
      ['pnpm-tsc', 'typecheck', 'pnpm run tsc', 'package.json'],
    ]);
    expect((await detectPresets(workspace({ 'package.json': scripts, 'yarn.lock': '' }))).map((p) => p.command)).toEqual(['yarn test', 'yarn run build', 'yarn run lint', 'yarn run tsc']);
  });

  it("skips npm init's placeholder test script", async () => {
    const presets = await detectPresets(workspace({ 'package.json': JSON.stringify({ scripts: { test: 'echo "Error: no test specified" && exit 1', build: 'tsc' } }) }));
    expect(presets.map((p) => p.id)).toEqual(['npm-build']);
  });

  it('gets no presets from a malformed or odd package.json, without throwing', async () => {
    for (const text of ['{ "scripts": { "test": ', '[]', 'null', '{"scripts": ["test"]}', '{"scripts": {"test": 42, "build": ""}}']) {
      expect(await detectPresets(workspace({ 'package.json': text }))).toEqual([]);
    }
    // A broken package.json does not hide the other manifests.
    expect((await detectPresets(workspace({ 'package.json': '{oops', 'go.mod': 'module example.com/x\n' }))).map((p) => p.id)).toEqual(['go-test', 'go-build', 'go-vet']);
  });

  it('ignores a symlinked manifest (it could point outside the workspace)', async () => {
    const outside = workspace({ 'package.json': NODE_PACKAGE });
    const root = workspace({});
    symlinkSync(join(outside, 'package.json'), join(root, 'package.json'));
    expect(await detectPresets(root)).toEqual([]);
  });

  it('detects cargo presets from Cargo.toml', async () => {
    expect(commands(await detectPresets(workspace({ 'Cargo.toml': '[package]\nname = "x"\nversion = "0.1.0"\n' })))).toEqual([
      ['cargo-test', 'test', 'cargo test', 'Cargo.toml'],
      ['cargo-build', 'build', 'cargo build', 'Cargo.toml'],
      ['cargo-clippy', 'lint', 'cargo clippy', 'Cargo.toml'],
    ]);
    expect(await detectPresets(workspace({ 'Cargo.toml': 'not a manifest' }))).toEqual([]);
  });

  it('detects pytest, ruff and mypy from pyproject.toml', async () => {
    const pyproject = '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n\n[tool.ruff]\nline-length = 100\n\n[tool.mypy]\nstrict = true\n';
    expect(commands(await detectPresets(workspace({ 'pyproject.toml': pyproject })))).toEqual([
      ['pytest', 'test', 'pytest', 'pyproject.toml'],
      ['ruff', 'lint', 'ruff check .', 'pyproject.toml'],
      ['mypy', 'typecheck', 'mypy .', 'pyproject.toml'],
    ]);
    // A tests directory is enough for pytest; nothing configured means no ruff or mypy.
    expect(commands(await detectPresets(workspace({ 'pyproject.toml': '[project]\nname = "x"\n', 'tests/test_x.py': 'def test_x(): pass\n' })))).toEqual([['pytest', 'test', 'pytest', 'pyproject.toml']]);
    expect(await detectPresets(workspace({ 'pyproject.toml': '[project]\nname = "x"\n# [tool.ruff] in a comment\n' }))).toEqual([]);
  });

  it('detects go presets from go.mod', async () => {
    expect(commands(await detectPresets(workspace({ 'go.mod': 'module example.com/app\n\ngo 1.22\n' })))).toEqual([
      ['go-test', 'test', 'go test ./...', 'go.mod'],
      ['go-build', 'build', 'go build ./...', 'go.mod'],
      ['go-vet', 'lint', 'go vet ./...', 'go.mod'],
    ]);
  });

  it('returns nothing for an empty or missing workspace', async () => {
    expect(await detectPresets(workspace({}))).toEqual([]);
    expect(await detectPresets('/nonexistent/a3s-verification-workspace')).toEqual([]);
  });

  it('never runs anything: a script that would leave a marker leaves none', async () => {
    const root = workspace({ 'package.json': JSON.stringify({ scripts: { test: 'touch ran-test' } }) });
    await detectPresets(root);
    expect(existsSync(join(root, 'ran-test'))).toBe(false);
  });
});

describe('matchPreset', () => {
  const presets: VerificationPreset[] = [
    { id: 'npm-test', kind: 'test', description: 't', command: 'npm test', source: 'package.json' },
    { id: 'go-test', kind: 'test', description: 'g', command: 'go test ./...', source: 'go.mod' },
  ];

  it('matches commands equal up to whitespace', () => {
    expect(matchPreset('npm test', presets)?.id).toBe('npm-test');
    expect(matchPreset('  go   test\t./...\n', presets)?.id).toBe('go-test');
  });

  it('does not match other commands', () => {
    expect(matchPreset('npm test -- --watch', presets)).toBeUndefined();
    expect(matchPreset('npm run test', presets)).toBeUndefined();
    expect(matchPreset('NPM TEST', presets)).toBeUndefined();
    expect(matchPreset('   ', presets)).toBeUndefined();
    expect(matchPreset('npm test', [])).toBeUndefined();
  });
});

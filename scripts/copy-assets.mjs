// Copies non-TypeScript assets (model-facing prose beside the tools) from src into dist/src.
import { chmodSync, cpSync, existsSync, readdirSync, statSync, mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';

const exts = ['.md', '.txt'];
function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (exts.some((e) => name.endsWith(e))) {
      const target = join('dist', path);
      mkdirSync(dirname(target), { recursive: true });
      cpSync(path, target);
    }
  }
}
walk('src');
// The package's bin (package.json "bin": a3s) must be executable to run as ./dist/src/cli/a3s.js.
if (existsSync('dist/src/cli/a3s.js')) chmodSync('dist/src/cli/a3s.js', 0o755);

// Copies non-TypeScript assets (model-facing prose beside the tools) from src into dist/src.
import { cpSync, readdirSync, statSync, mkdirSync } from 'node:fs';
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

// Builds the console (web/) into dist/web: web/src/main.ts bundled by esbuild (the typed client and zod
// included) into console.js, plus index.html and console.css copied. `npm run build` runs it from
// dist/scripts; the test setup imports it, so tests serve a fresh build.
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The checkout root: the first directory above this module with web/src/main.ts (from scripts/ or dist/scripts/). */
export function checkoutRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'web', 'src', 'main.ts'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no web/src/main.ts above ${from}`);
  }
}

/** The files of web/ copied as they are beside the bundle. */
export const STATIC_WEB_FILES: readonly string[] = ['index.html', 'console.css'];

/** Bundle the console into `outDir` (default <root>/dist/web) and copy its static files; resolves when written. */
export async function buildWeb(
  root: string = checkoutRoot(),
  outDir: string = join(root, 'dist', 'web'),
): Promise<string> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: [join(root, 'web', 'src', 'main.ts')],
    outfile: join(outDir, 'console.js'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    sourcemap: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  for (const file of STATIC_WEB_FILES) cpSync(join(root, 'web', file), join(outDir, file));
  return outDir;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = await buildWeb(checkoutRoot(), process.argv[2] ? resolve(process.argv[2]) : undefined);
  console.log(`console built into ${out}`);
}

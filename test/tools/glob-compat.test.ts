import path from 'node:path';
import fg from 'fast-glob';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { globWorkspace } from '../../src/runtime/tools/glob-workspace.js';
import { relativeToWorkspace } from '../../src/runtime/tools/workspace-path.js';
import { createTestWorkspace, type TestWorkspace } from './tool-test-context.js';

// The confined walk keeps the pattern semantics the tools had with fast-glob: same files for the same
// pattern, options and tree (without symlinks, which fast-glob did not confine).
const TREE = [
  'README.md',
  '.env',
  '.github/workflows/ci.yml',
  'package.json',
  'src/a.ts',
  'src/b.tsx',
  'src/.hidden.ts',
  'src/index.js',
  'src/deep/c.ts',
  'src/deep/d.test.ts',
  'src/deep/deeper/e.ts',
  'src/deep/deeper/f.md',
  'src/lib/1.ts',
  'src/lib/2.ts',
  'src/lib/10.ts',
  'src/lib/file(1).txt',
  'src/lib/a b.txt',
  'src/lib/[x].ts',
  'src/lib/{y}.ts',
  'src/node_modules/inner.ts',
  'test/a.test.ts',
  'test/fixtures/x.json',
  'dist/out.js',
  'dist/sub/out.d.ts',
  'node_modules/pkg/index.ts',
  'node_modules/pkg/node_modules/deep.ts',
  '.git/config',
  '.git/objects/ab/cdef',
  'docs/a.md',
  'docs/dist/b.md',
  'a/b/c/d/e/f.txt',
  'x.tar.gz',
];

const PATTERNS = [
  '**/*',
  '*',
  '**',
  '*.ts',
  '*.md',
  '**/*.ts',
  '**/*.{ts,tsx}',
  '*.{ts,tsx}',
  'src/**/*.ts',
  'src/*.ts',
  './src/*.ts',
  'src/**',
  'src/deep/**/*',
  'src/a.ts',
  'src/nope.ts',
  'src',
  'src/',
  'src/deep',
  '{src,test}/**/*.ts',
  'src/{a,b}.ts*',
  'src/{a.ts,b.tsx}',
  'src/lib/{1..3}.ts',
  'src/lib/{01..10}.ts',
  'src/lib/?.ts',
  'src/lib/[0-9].ts',
  'src/lib/[!1].ts',
  'src/lib/*(1).txt',
  'src/lib/file(1).txt',
  'src/lib/a b.txt',
  'src/lib/\\[x\\].ts',
  'src/lib/{y}.ts',
  '@(src|test)/**/*.ts',
  '!(dist)/**/*.js',
  '**/!(*.test).ts',
  '+(src|docs)/*.md',
  '**/deep*/**',
  '**/.*',
  '.*',
  '.github/**',
  '**/dist/**',
  '**/node_modules/**',
  'node_modules/**',
  '.git/*',
  '**/*.test.ts',
  '**/d.test.ts',
  'a/**/f.txt',
  'a/*/c/**/*.txt',
  'a/b/c/d/e/f.txt',
  '**/e/*',
  'x.tar.gz',
  '*.gz',
  '*.tar.*',
  'src//deep/*.ts',
  '**/[[:alpha:]].ts',
  '!**/*.ts',
  '{a,b,src}/*',
  'src/*/',
  'docs/**/*.md',
  'src/{,deep/}*.ts',
  '{src,node_modules}/**',
  'src/**/deep/**',
  '**/deeper',
  'src/*/*/*',
  '**/lib/*.ts',
  '?(src)/*.ts',
  '[st]*/**/*.ts',
  'src/**/',
  '**/*.',
  '{README.md,package.json}',
  '{.env,src/a.ts,src/deep/c.ts}',
  'src/lib/{1,10}.ts',
  '{a/b,src/deep}/**/*.{txt,ts}',
  'src/**/*.ts,src/**/*.tsx',
  'SRC/**',
];

const CONFIGS = [
  ['glob', { ignore: ['**/node_modules/**', '**/.git/**'], baseNameMatch: false }],
  ['grep', { ignore: ['**/node_modules/**', '**/.git/**', '**/dist/**'], baseNameMatch: true }],
] as const;

let ws: TestWorkspace;
beforeAll(() => {
  ws = createTestWorkspace();
  for (const file of TREE) ws.file(file, `${file}\n`);
});
afterAll(() => ws.cleanup());

async function fastGlob(base: string, pattern: string, options: (typeof CONFIGS)[number][1]): Promise<string[]> {
  const cwd = path.join(ws.root, base);
  const entries = await fg(pattern, {
    cwd,
    absolute: true,
    dot: true,
    onlyFiles: true,
    followSymbolicLinks: false,
    baseNameMatch: options.baseNameMatch,
    ignore: [...options.ignore],
    suppressErrors: true,
  });
  return entries.map((entry) => relativeToWorkspace(ws.root, entry)).sort();
}

async function confined(base: string, pattern: string, options: (typeof CONFIGS)[number][1]): Promise<string[]> {
  const files = ws.context().files;
  const dir = files.openDirectory(base);
  try {
    const listing = await globWorkspace(files, dir, pattern, {
      ...options,
      maxFiles: 100_000,
      signal: new AbortController().signal,
    });
    listing.close();
    return listing.files.map((file) => file.path).sort();
  } finally {
    dir.close();
    files.release();
  }
}

describe('globWorkspace matches what fast-glob matched', () => {
  for (const [tool, options] of CONFIGS) {
    for (const base of ['.', 'src']) {
      it.each(PATTERNS)(`${tool} from ${base}: %s`, async (pattern) => {
        expect(await confined(base, pattern, options)).toEqual(await fastGlob(base, pattern, options));
      });
    }
  }
});

// CI check of the module graph (DESIGN.md "Layers and layout"): no import cycles in src (type-only imports
// included) and the layer rules: protocol imports nothing of ours but errors.ts; client imports only protocol,
// errors.ts, itself and zod (it runs in browsers); the console (web/src) only itself, client and protocol (and
// marked, in web/src/markdown-view.ts only); nothing under runtime, stores or cluster imports Fastify;
// only tests import test/support; interop imports neither server nor routes; only app.ts imports routes.
// Prints every violation; exit 1 if any.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function tsFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...tsFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const problems = [];
const graph = new Map();
const specifiers = (text) => [...text.matchAll(IMPORT)].map((m) => m[1] ?? m[2]);
for (const file of [...tsFiles(join(root, 'src')), ...tsFiles(join(root, 'web', 'src'))]) {
  const rel = relative(root, file);
  const edges = [];
  for (const spec of specifiers(readFileSync(file, 'utf8'))) {
    if (spec.startsWith('.')) {
      const target = relative(root, resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
      edges.push(target);
      if (rel.startsWith('src/protocol/') && !target.startsWith('src/protocol/') && target !== 'src/errors.ts')
        problems.push(`layer: ${rel} imports ${target} (protocol imports nothing of ours but errors.ts)`);
      if (target.startsWith('test/')) problems.push(`layer: ${rel} imports ${target} (only tests import test/support)`);
      if (rel.startsWith('src/interop/') && (target.startsWith('src/server/') || target.startsWith('src/routes/')))
        problems.push(
          `layer: ${rel} imports ${target} (interop maps protocols; its route registrars live in src/routes)`,
        );
      if (target.startsWith('src/routes/') && !rel.startsWith('src/routes/') && rel !== 'src/app.ts')
        problems.push(
          `layer: ${rel} imports ${target} (only src/app.ts imports route registrars; what routes share lives in src/server)`,
        );
      if (
        rel.startsWith('web/') &&
        !target.startsWith('web/') &&
        !target.startsWith('src/client/') &&
        !target.startsWith('src/protocol/')
      )
        problems.push(`layer: ${rel} imports ${target} (the console bundles only itself, src/client and src/protocol)`);
      if (
        rel.startsWith('src/client/') &&
        !target.startsWith('src/client/') &&
        !target.startsWith('src/protocol/') &&
        target !== 'src/errors.ts'
      )
        problems.push(`layer: ${rel} imports ${target} (client imports only src/protocol, src/errors.ts and itself)`);
    } else if (rel === 'web/src/markdown-view.ts' && spec === 'marked') {
      // The console's one other package: marked's lexer, for model Markdown, in the file that walks its tokens.
    } else if ((rel.startsWith('src/client/') || rel.startsWith('web/')) && spec !== 'zod') {
      problems.push(`layer: ${rel} imports ${spec} (client runs in browsers too: no package but zod, no node:*)`);
    } else if (/^(src\/(runtime|stores|cluster)\/)/.test(rel) && (spec === 'fastify' || spec.startsWith('@fastify/'))) {
      problems.push(`layer: ${rel} imports ${spec} (runtime, stores and cluster never import Fastify)`);
    }
  }
  graph.set(rel, edges);
}

// Tarjan's strongly connected components: every component of more than one file is a cycle.
let index = 0;
const stack = [];
const state = new Map();
function visit(node) {
  const entry = { index, low: index, onStack: true };
  index += 1;
  state.set(node, entry);
  stack.push(node);
  for (const next of graph.get(node) ?? []) {
    if (!graph.has(next)) continue;
    const seen = state.get(next);
    if (!seen) {
      visit(next);
      entry.low = Math.min(entry.low, state.get(next).low);
    } else if (seen.onStack) entry.low = Math.min(entry.low, seen.index);
  }
  if (entry.low === entry.index) {
    const component = [];
    let member;
    do {
      member = stack.pop();
      state.get(member).onStack = false;
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node))
      problems.push(`cycle: ${component.sort().join(' <-> ')}`);
  }
}
for (const node of graph.keys()) if (!state.has(node)) visit(node);

if (problems.length > 0) {
  process.stderr.write(`${problems.join('\n')}\n${problems.length} import problem(s)\n`);
  process.exit(1);
}
process.stdout.write(`imports: ${graph.size} files, no cycles, layer rules hold\n`);

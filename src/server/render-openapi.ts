import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { buildApp } from '../app.js';
import { CodeConfigSchema } from '../config/code-config.js';
import { createRuntimeContext } from '../context.js';
import { defaultDocRegistries, type DocRegistries } from './doc-registries.js';
import { buildOpenApiDocument } from './openapi-document.js';
import { withEventTable } from './render-event-table.js';

const HEADER = [
  '# Generated from the zod schemas the routes register with (src/server/openapi-document.ts).',
  '# Do not edit by hand: run `npm run openapi` to regenerate it.',
  '',
].join('\n');

/** The package root: the nearest directory above this module holding package.json (works from src and dist). */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above render-openapi');
    dir = parent;
  }
}

/** Path of the committed openapi.yaml at the package root. */
export function openApiYamlPath(): string {
  return join(packageRoot(), 'openapi.yaml');
}

/** The generated files' text: openapi.yaml, and README.md with its event table. */
export interface GeneratedDocs {
  openapiYaml: string;
  readme: string;
}

/**
 * The one generator of openapi.yaml and README's event table, from the given registries (the server's own
 * by default): `scripts/generate-openapi.ts` writes what it returns; a test passes registries with fixtures.
 */
export async function renderGeneratedDocs(
  readme: string,
  docs: DocRegistries = defaultDocRegistries(),
): Promise<GeneratedDocs> {
  return { openapiYaml: await renderOpenApiYaml(docs), readme: withEventTable(readme, docs.events) };
}

/** Build the app with a minimal in-memory config (never listening) and render its OpenAPI document as YAML text. */
export async function renderOpenApiYaml(docs: DocRegistries = defaultDocRegistries()): Promise<string> {
  const root = packageRoot();
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: string };
  const config = CodeConfigSchema.parse({ storageBackend: 'memory', logLevel: 'silent', workspaceRoots: [root] });
  const ctx = await createRuntimeContext(config, { logger: pino({ level: 'silent' }) });
  const { app } = await buildApp(ctx);
  try {
    await app.ready();
    const info = {
      title: 'A3S Code Server',
      version: pkg.version ?? '0.0.0',
      description: 'HTTP and WebSocket control plane for coding agents.',
    };
    const document = buildOpenApiDocument(ctx.openapi, info, docs);
    // No anchors/aliases for shared objects and no line folding, so the text is stable and easy to diff.
    return HEADER + stringify(document, { aliasDuplicateObjects: false, lineWidth: 0 });
  } finally {
    await app.close();
    await ctx.agent.close();
  }
}

// Writes openapi.yaml at the package root from the zod schemas the routes register, and README.md's event
// table from the event registry (`npm run openapi`).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withEventTable } from '../src/server/render-event-table.js';
import { openApiYamlPath, packageRoot, renderOpenApiYaml } from '../src/server/render-openapi.js';

/** Render the OpenAPI document into openapi.yaml and the event table into README.md. */
export async function generateOpenApi(): Promise<string> {
  const path = openApiYamlPath();
  writeFileSync(path, await renderOpenApiYaml());
  const readme = join(packageRoot(), 'README.md');
  writeFileSync(readme, withEventTable(readFileSync(readme, 'utf8')));
  return path;
}

generateOpenApi().then(
  (path) => process.stdout.write(`wrote ${path}\n`),
  (error: unknown) => {
    process.stderr.write(`generate-openapi failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);

// Writes openapi.yaml at the package root from the zod schemas the routes register, and docs/events.md's event
// table from the event registry (`npm run openapi`), both through renderGeneratedDocs with the server's registries.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiYamlPath, packageRoot, renderGeneratedDocs } from '../src/server/render-openapi.js';

/** Render the OpenAPI document into openapi.yaml and the event table into docs/events.md. */
export async function generateOpenApi(): Promise<string> {
  const path = openApiYamlPath();
  const eventsDocPath = join(packageRoot(), 'docs', 'events.md');
  const generated = await renderGeneratedDocs(readFileSync(eventsDocPath, 'utf8'));
  writeFileSync(path, generated.openapiYaml);
  writeFileSync(eventsDocPath, generated.readme);
  return path;
}

generateOpenApi().then(
  (path) => process.stdout.write(`wrote ${path}\n`),
  (error: unknown) => {
    process.stderr.write(
      `generate-openapi failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);

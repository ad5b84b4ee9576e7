// Writes openapi.yaml at the package root from the zod schemas the routes register (`npm run openapi`).
import { writeFileSync } from 'node:fs';
import { openApiYamlPath, renderOpenApiYaml } from '../src/server/render-openapi.js';

/** Render the OpenAPI document and write it to openapi.yaml. */
export async function generateOpenApi(): Promise<string> {
  const path = openApiYamlPath();
  writeFileSync(path, await renderOpenApiYaml());
  return path;
}

generateOpenApi().then(
  (path) => process.stdout.write(`wrote ${path}\n`),
  (error: unknown) => {
    process.stderr.write(`generate-openapi failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);

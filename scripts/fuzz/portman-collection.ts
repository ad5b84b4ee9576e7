import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** A Postman collection item as Portman writes it (only the fields the fuzz touches). */
export interface PostmanItem {
  name: string;
  item?: PostmanItem[];
  request?: {
    method: string;
    url: {
      path?: string[];
      query?: Array<{ key: string; value?: string; disabled?: boolean }>;
      variable?: Array<{ key: string; value?: string }>;
    };
    header?: Array<{ key: string; value?: string }>;
    body?: { mode?: string; raw?: string };
    auth?: unknown;
  };
  event?: unknown[];
}

/** The generated collection, flattened: main requests (contract tests) and Portman's fuzz variations. */
export interface FuzzCollection {
  info: unknown;
  auth?: unknown;
  variable?: unknown[];
  main: PostmanItem[];
  variations: PostmanItem[];
}

const FUZZ_OPTIONS = {
  requiredFields: { enabled: true },
  minimumNumberFields: { enabled: true },
  maximumNumberFields: { enabled: true },
  minLengthFields: { enabled: true },
  maxLengthFields: { enabled: true },
};

/** The Portman settings: contract tests on every operation, and a 400-expecting fuzz variation of each. */
export const PORTMAN_CONFIG = {
  version: 1.0,
  tests: {
    contractTests: [
      { openApiOperation: '*::/*', contentType: { enabled: true } },
      { openApiOperation: '*::/*', jsonBody: { enabled: true } },
      { openApiOperation: '*::/*', schemaValidation: { enabled: true } },
    ],
    variationTests: [
      {
        openApiOperation: '*::/*',
        openApiResponse: '400',
        variations: [
          {
            name: 'fuzz',
            fuzzing: [
              { requestBody: [FUZZ_OPTIONS], requestQueryParams: [FUZZ_OPTIONS], requestHeaders: [FUZZ_OPTIONS] },
            ],
            tests: {
              contractTests: [
                { statusCode: { enabled: true } },
                { jsonBody: { enabled: true } },
                { schemaValidation: { enabled: true } },
              ],
            },
          },
        ],
      },
    ],
  },
  globals: { stripResponseExamples: true, securityOverwrites: { bearer: { token: '{{token}}' } } },
};

/** Path variables the fuzz points at real objects of the tenant (the rest keep Portman's random values). */
const PATH_VARIABLES: Record<string, string> = { id: '{{sessionId}}', runId: '{{runId}}' };

/** Anything that names a network address: requests may only reach this machine's loopback (a closed port). */
const URL_PATTERN = /\b(?:https?|wss?):\/\/[^\s"'\\]*/g;
const LOOPBACK_SINK = 'http://127.0.0.1:9/fuzz';

/**
 * Runs Portman (in `workDir`, offline: the spec is a local file) to turn openapi.yaml into a Postman
 * collection with contract tests and fuzz variations, then prepares it for the fuzz: session and run
 * path variables become `{{sessionId}}` / `{{runId}}`, every bearer token `{{token}}`, every URL in a
 * request is pointed at a closed loopback port (webhooks, MCP and budget hosts never leave the machine),
 * and the session-closing request goes last so the rest run against a live session.
 */
export async function generateCollection(openapiPath: string, workDir: string): Promise<FuzzCollection> {
  const configPath = join(workDir, 'portman-config.json');
  const outPath = join(workDir, 'collection.json');
  writeFileSync(configPath, JSON.stringify(PORTMAN_CONFIG, null, 2));
  const require = createRequire(import.meta.url);
  const bin = join(require.resolve('@apideck/portman/package.json'), '..', 'bin', 'portman');
  await runProcess(
    process.execPath,
    [bin, '-l', openapiPath, '-b', '{{baseUrl}}', '-c', configPath, '-o', outPath, '-n', 'false'],
    workDir,
  );
  const raw = JSON.parse(readFileSync(outPath, 'utf8')) as {
    info: unknown;
    auth?: unknown;
    variable?: unknown[];
    item: PostmanItem[];
  };
  const variationsFolder = raw.item.find((i) => i.name === 'Variation Tests');
  const main = flatten(raw.item.filter((i) => i !== variationsFolder));
  const variations = flatten(variationsFolder ? [variationsFolder] : []);
  for (const item of [...main, ...variations]) prepare(item);
  const isClose = (item: PostmanItem): boolean =>
    item.request?.method === 'DELETE' && (item.request.url.path ?? []).join('/') === 'v1/sessions/:id';
  return {
    info: raw.info,
    auth: raw.auth,
    variable: raw.variable,
    main: [...main.filter((i) => !isClose(i)), ...main.filter(isClose)],
    variations: variations.filter((i) => !isClose(i)),
  };
}

/** A collection newman can run, from a list of items. */
export function collectionOf(source: FuzzCollection, items: PostmanItem[]): Record<string, unknown> {
  return { info: source.info, auth: source.auth, variable: source.variable, item: items };
}

function flatten(items: PostmanItem[]): PostmanItem[] {
  return items.flatMap((item) => (item.item ? flatten(item.item) : item.request ? [item] : []));
}

function prepare(item: PostmanItem): void {
  const request = item.request;
  if (request === undefined) return;
  for (const variable of request.url.variable ?? []) {
    const value = PATH_VARIABLES[variable.key];
    if (value !== undefined) variable.value = value;
  }
  if (request.auth !== undefined)
    request.auth = { type: 'bearer', bearer: [{ type: 'string', key: 'token', value: '{{token}}' }] };
  if (request.body?.raw !== undefined) request.body.raw = request.body.raw.replace(URL_PATTERN, LOOPBACK_SINK);
  for (const entry of [...(request.url.query ?? []), ...(request.header ?? [])]) {
    if (typeof entry.value === 'string') entry.value = entry.value.replace(URL_PATTERN, LOOPBACK_SINK);
  }
  // The session's event stream (SSE) never ends by itself: asked for as JSON it answers its documented 426, and
  // the stream itself is fuzzed by the raw requests and the SSE tests.
  if (request.method === 'GET' && (request.url.path ?? []).join('/') === 'v1/sessions/:id/events')
    for (const header of request.header ?? [])
      if (header.key.toLowerCase() === 'accept') header.value = 'application/json';
}

function runProcess(command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-8000)));
    child.stderr.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-8000)));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`portman exited ${code}:\n${output}`))));
  });
}

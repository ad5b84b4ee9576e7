import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { openApiYamlPath } from '../src/server/render-openapi.js';
import { startFakeProvider, type FakeProvider } from './support/fake-provider.js';
import { startTestServer, tempDir, type TestServer } from './support/test-server.js';

const ROOT = resolve(import.meta.dirname, '..');
const METHODS = ['get', 'put', 'post', 'delete'] as const;

interface Operation {
  operationId?: string;
  tags?: string[];
  requestBody?: { content: Record<string, unknown> };
}
type Document = { paths: Record<string, Partial<Record<(typeof METHODS)[number], Operation>>>; servers?: unknown[] };

const document = parse(readFileSync(openApiYamlPath(), 'utf8')) as Document;
const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  METHODS.filter((m) => item[m] !== undefined).map((method) => ({ path, method, op: item[method]! })),
);

/**
 * One call of an operation through openapi-fetch, typed by the generated `paths`: its own parameters and (when
 * it has one) its JSON body, so the file compiles only when every operation is well formed for the generator.
 */
function callOf({ path, method, op }: (typeof operations)[number], i: number): { declared: string; call: string } {
  const type = `paths[${JSON.stringify(path)}][${JSON.stringify(method)}]`;
  const json = op.requestBody?.content['application/json'] !== undefined;
  const declared = [`declare const params${i}: ${type}['parameters'];`];
  if (json)
    declared.push(`declare const body${i}: NonNullable<${type}['requestBody']>['content']['application/json'];`);
  const init = `{ params: params${i}${json ? `, body: body${i}` : ''} }`;
  return {
    declared: declared.join('\n'),
    call: `  await client.${method.toUpperCase()}(${JSON.stringify(path)}, ${init});`,
  };
}

describe('a client generated from openapi.yaml (openapi-typescript + openapi-fetch)', () => {
  let fake: FakeProvider;
  let t: TestServer;
  let dir: string;
  beforeAll(async () => {
    fake = await startFakeProvider();
    t = await startTestServer({ fake });
    dir = tempDir('a3s-genclient-');
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    mkdirSync(join(dir, 'src'));
    execFileSync(process.execPath, [
      join(ROOT, 'node_modules/openapi-typescript/bin/cli.js'),
      openApiYamlPath(),
      '-o',
      join(dir, 'src/api.d.ts'),
    ]);
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('every operation has a unique operationId and a tag; the document names a server', () => {
    const ids = operations.map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(operations.every(({ op }) => op.tags?.length === 1)).toBe(true);
    expect(document.servers).toEqual([expect.objectContaining({ url: 'http://127.0.0.1:{port}' })]);
  });

  it('type-checks a call of each operation, and typed calls work against a live server', async () => {
    const calls = operations.map(callOf);
    expect(calls.length).toBeGreaterThan(70);
    writeFileSync(
      join(dir, 'src/calls.ts'),
      [
        `import createClient from 'openapi-fetch';`,
        `import type { paths } from './api.js';`,
        ...calls.map((c) => c.declared),
        `export async function everyOperation(client: ReturnType<typeof createClient<paths>>): Promise<void> {`,
        ...calls.map((c) => c.call),
        `}`,
        // Typed answers: a session's id is a string, a run's status one of the enum.
        `export async function firstSession(baseUrl: string): Promise<string> {`,
        `  const client = createClient<paths>({ baseUrl });`,
        `  const created = await client.POST('/v1/sessions', { body: {} });`,
        `  if (created.error) throw new Error(created.error.error.code);`,
        `  const id: string = created.data.session.id;`,
        `  const run = await client.POST('/v1/sessions/{id}/runs', { params: { path: { id } }, body: { input: 'hi', wait: true } });`,
        `  if (run.error) throw new Error(run.error.error.code);`,
        `  const status: 'completed' | 'failed' | 'cancelled' | 'queued' | 'created' | 'planning' | 'executing' | 'verifying' = run.data.run.status;`,
        `  const missing = await client.GET('/v1/sessions/{id}', { params: { path: { id: 'no-such-session' } } });`,
        `  return [id, status, missing.error?.error.code].join(' ');`,
        `}`,
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: false,
          outDir: 'out',
          skipLibCheck: true,
          types: [],
          lib: ['ES2022', 'DOM'],
        },
        include: ['src'],
      }),
    );
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    try {
      execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8' });
    } catch (error) {
      throw new Error(`the generated client does not type-check:\n${(error as { stdout?: string }).stdout ?? ''}`);
    }
    fake.script({ text: 'hello' });
    const built = (await import(join(dir, 'out/calls.js'))) as { firstSession: (url: string) => Promise<string> };
    const answer = await built.firstSession(t.url);
    expect(answer).toMatch(/^\S+ completed SESSION_NOT_FOUND$/);
    fake.assertDone();
  }, 120_000);
});

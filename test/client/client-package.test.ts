import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { packClient } from '../../scripts/pack-client.js';
import { useTestServers } from '../support/run-helpers.js';
import { tempDir } from '../support/test-server.js';

const run = promisify(execFile);
const TSC = join(process.cwd(), 'node_modules', 'typescript', 'bin', 'tsc');

/** A consumer as an integrator writes one: strict TypeScript, the package's own types, no WebSocket passed. */
function consumer(baseUrl: string, workspace: string): string {
  return `import { A3sClient, SessionNotFoundError, type AgentEvent } from 'a3s-code-client';

const client = new A3sClient({ baseUrl: ${JSON.stringify(baseUrl)} });
const session = await client.session(${JSON.stringify(workspace)}, { maxToolRounds: 4 });
const result = await session.send('say hello');
const text: string = result.text;
const stream = await session.stream('stream hello');
const types: string[] = [];
for await (const event of stream) types.push((event satisfies AgentEvent).type);
try {
  await client.getSession('no-such-session');
} catch (error) {
  if (!(error instanceof SessionNotFoundError)) throw error;
  types.push('not-found:' + error.code);
}
await session.close();
console.log(JSON.stringify({ text, types }));
`;
}

describe('the typed client as a package (a3s-code-client)', () => {
  const start = useTestServers();

  it('packs with declarations, installs in an empty project with zod only, type-checks and runs on Node 20', async () => {
    const tarball = packClient(tempDir('a3s-pack-'));
    const project = tempDir('a3s-consumer-');
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], { cwd: project });
    const installed = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, unknown>;
    };
    // zod is the one runtime dependency (ws is an optional peer: not installed until the consumer adds it).
    const names = Object.keys(installed.packages).filter((name) => name !== '');
    expect(names.sort()).toEqual(['node_modules/a3s-code-client', 'node_modules/zod']);
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules', 'a3s-code-client', 'package.json'), 'utf8'));
    expect(manifest.exports['.'].types).toBe('./dist/client/index.d.ts');

    const t = await start({});
    writeFileSync(join(project, 'consumer.ts'), consumer(t.url, t.root));
    // A call the types forbid: proves the declarations are the real ones (not `any`).
    writeFileSync(
      join(project, 'wrong.ts'),
      `import { A3sClient } from 'a3s-code-client';\nconst client = new A3sClient({ baseUrl: 1 });\nexport const s = await client.session('/w', { maxToolRounds: 'many' });\n`,
    );
    const tsconfig = (files: string[]): string =>
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023', 'DOM'],
          types: [],
          strict: true,
          skipLibCheck: false,
          outDir: 'out',
        },
        files,
      });
    writeFileSync(join(project, 'tsconfig.json'), tsconfig(['consumer.ts']));
    writeFileSync(join(project, 'tsconfig.wrong.json'), tsconfig(['wrong.ts']));
    await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: project });
    const wrong = await run(process.execPath, [TSC, '-p', 'tsconfig.wrong.json', '--noEmit'], { cwd: project }).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? 'failed',
    );
    expect(wrong).toContain("wrong.ts(2,32): error TS2322: Type 'number' is not assignable to type 'string'");
    expect(wrong).toContain("wrong.ts(3,47): error TS2322: Type 'string' is not assignable to type 'number'");

    // Without `ws` (Node 20 has no global WebSocket) the client says what to do; installed, it imports it by itself.
    const nodeHasWebSocket = typeof (globalThis as { WebSocket?: unknown }).WebSocket === 'function';
    if (!nodeHasWebSocket) {
      t.fake.script({ text: 'hello once' });
      const missing = await run(process.execPath, [join('out', 'consumer.js')], { cwd: project }).then(
        () => '',
        (error: { stderr?: string }) => error.stderr ?? '',
      );
      expect(missing).toContain('the "ws" package is not installed');
    }
    t.fake.script({ text: 'hello once' }, { text: 'hello streamed', chunks: 3 });
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', 'ws@8'], { cwd: project });
    const { stdout } = await run(process.execPath, [join('out', 'consumer.js')], { cwd: project });
    const answer = JSON.parse(stdout) as { text: string; types: string[] };
    expect(answer.text).toBe('hello once');
    expect(answer.types[0]).toBe('agent_start');
    expect(answer.types).toContain('text_delta');
    expect(answer.types).toContain('agent_end');
    expect(answer.types.at(-1)).toBe('not-found:SESSION_NOT_FOUND');
  }, 180_000);
});

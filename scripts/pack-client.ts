// Builds the typed client as its own package, `a3s-code-client` (docs/client.md "Installing"): the client, the
// wire schemas it reads and the error catalogue, compiled with declarations; zod its only dependency and `ws` an
// optional peer (Node 20 has no global WebSocket). `node dist/scripts/pack-client.js [destination]` writes the
// tarball `npm pack` makes into destination (default dist/) and prints its path.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

interface RootPackage {
  version: string;
  license?: string;
  engines?: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

/** The repository root: two levels above dist/scripts (built) or one above scripts (from source). */
function repositoryRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return here.includes(`${join('dist', 'scripts')}`) ? resolve(here, '..', '..') : resolve(here, '..');
}

/** Compile the client package into dist/client-package and pack it into `destination`; returns the tarball's path. */
export function packClient(destination: string): string {
  const root = repositoryRoot();
  const out = join(root, 'dist', 'client-package');
  rmSync(out, { recursive: true, force: true });
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.client.json')], { cwd: root, stdio: 'inherit' });
  const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as RootPackage;
  const ws = rootPackage.dependencies.ws ?? '^8.0.0';
  const manifest = {
    name: 'a3s-code-client',
    version: rootPackage.version,
    description: 'The typed client of A3S Code Server: sessions, runs and events over HTTP and WebSocket',
    type: 'module',
    exports: { '.': { types: './dist/client/index.d.ts', import: './dist/client/index.js' } },
    types: './dist/client/index.d.ts',
    files: ['dist'],
    engines: rootPackage.engines ?? { node: '>=20' },
    dependencies: { zod: rootPackage.dependencies.zod },
    peerDependencies: { ws },
    peerDependenciesMeta: { ws: { optional: true } },
    ...(rootPackage.license ? { license: rootPackage.license } : {}),
  };
  writeFileSync(join(out, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(
    join(out, 'README.md'),
    "# a3s-code-client\n\nThe typed client of A3S Code Server. See the server's docs/client.md.\n\n```ts\nimport { A3sClient } from 'a3s-code-client';\n\nconst client = new A3sClient({ baseUrl: 'http://127.0.0.1:3000', token: process.env.A3S_TOKEN });\nconst session = await client.session('/work/repo', {});\nconsole.log((await session.send('hello')).text);\n```\n",
  );
  mkdirSync(destination, { recursive: true });
  const packed = execFileSync('npm', ['pack', '--json', '--pack-destination', resolve(destination)], {
    cwd: out,
    encoding: 'utf8',
  });
  const [entry] = JSON.parse(packed) as Array<{ filename: string }>;
  if (entry === undefined) throw new Error('npm pack wrote no tarball');
  return join(resolve(destination), entry.filename);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${packClient(process.argv[2] ?? join(repositoryRoot(), 'dist'))}\n`);
}

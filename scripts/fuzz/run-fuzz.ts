// Entry of `npm run fuzz [-- --short]`: Portman contract and fuzz tests from openapi.yaml, run with newman against
// a built server on 127.0.0.1 for two tenants (plus cross-tenant, anonymous and raw malformed requests); every
// response is checked against openapi.yaml with Ajv. Prints ONE JSON line; exits 1 on any failure.
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import newman from 'newman';
import { startBenchProvider } from '../../bench/bench-provider.js';
import { startServerProcess, type ServerProcess } from '../../bench/server-process.js';
import { collectionOf, generateCollection, type FuzzCollection, type PostmanItem } from './portman-collection.js';
import { rawCases, sendRaw } from './raw-requests.js';
import { ResponseOracle } from './response-oracle.js';

const OPENAPI = fileURLToPath(new URL('../../../openapi.yaml', import.meta.url));
const SAMPLE_PER_KIND = 8;
// How long one request may take before it counts as unanswered (no_response). Some operations run
// sandboxed commands (verifications, tool calls, runs with wait); on a starved CI machine one such request
// once took over 60 s, so the bound is generous: a hang still fails, only later.
const REQUEST_TIMEOUT_MS = 180_000;

/** The two tenants: A may do everything (admin, host_direct), B only `sessions`. */
const TENANTS = {
  a: {
    token: 'fuzz-token-tenant-a-0123456789',
    principal: 'fuzz-a',
    tenantId: 'tenant-a',
    scopes: ['sessions', 'host_direct', 'admin'],
  },
  b: { token: 'fuzz-token-tenant-b-0123456789', principal: 'fuzz-b', tenantId: 'tenant-b', scopes: ['sessions'] },
} as const;

/** One failure the fuzz found. */
interface Failure {
  kind: string;
  pass: string;
  method: string;
  path: string;
  status: number;
  detail: string;
}

/** One pass of the collection: whose token, which session and run, and which requests. */
interface Pass {
  name: string;
  token: string;
  sessionId: string;
  runId: string;
  items: PostmanItem[];
  /** A 2xx here is itself a failure of this kind (another tenant's session, or no token). */
  forbidSuccess?: { kind: 'cross_tenant_access' | 'unauthenticated_access'; onlyPaths: RegExp };
}

class FuzzRun {
  readonly failures: Failure[] = [];
  readonly covered = new Set<string>();
  requests = 0;
  portmanAssertionsFailed = 0;
  readonly portmanSample: string[] = [];

  constructor(
    readonly oracle: ResponseOracle,
    readonly server: ServerProcess,
  ) {}

  fail(failure: Failure): void {
    this.failures.push(failure);
  }

  /** Checks the server is still running; a crash is a failure of its own. */
  checkAlive(pass: string): boolean {
    const status = this.server.exitStatus();
    if (status === undefined) return true;
    if (!this.failures.some((f) => f.kind === 'crash'))
      this.fail({
        kind: 'crash',
        pass,
        method: '-',
        path: '-',
        status: 0,
        detail: `server exited (${status}):\n${this.server.output().slice(-3000)}`,
      });
    return false;
  }
}

async function main(argv: readonly string[]): Promise<number> {
  const short = argv.includes('--short') || process.env.FUZZ_SHORT === '1';
  const rounds = short
    ? 1
    : Number(/^--rounds=(\d+)$/.exec(argv.find((a) => a.startsWith('--rounds=')) ?? '')?.[1] ?? 3);
  const started = performance.now();
  const work = realpathSync(mkdtempSync(join(tmpdir(), 'a3s-fuzz-')));
  // As root the server runs commands as sandbox.run_as, which must pass through to its data and workspace dirs.
  if (process.getuid?.() === 0) chmodSync(work, 0o711);
  const root = join(work, 'workspace');
  const dataDir = join(work, 'data');
  const portmanDir = join(work, 'portman');
  for (const dir of [root, dataDir, portmanDir]) mkdirp(dir);
  writeFileSync(join(root, 'README.md'), '# fuzz workspace\n');
  const provider = await startBenchProvider({ answerChunks: 2, chunkText: 'ok ' });
  const server = await startServerProcess({
    OPENAI_API_KEY: 'sk-fuzz',
    OPENAI_BASE_URL: provider.baseUrl,
    A3S_MODEL: 'openai/fuzz-model',
    A3S_STORAGE_BACKEND: 'file',
    A3S_DATA_DIR: dataDir,
    A3S_WORKSPACE_ROOTS: root,
    A3S_API_TOKENS: JSON.stringify(Object.values(TENANTS)),
  }).catch(async (error: unknown) => {
    await provider.close();
    throw error;
  });
  const oracle = new ResponseOracle(OPENAPI);
  const run = new FuzzRun(oracle, server);
  let collections = 0;
  let generated = 0;
  try {
    const base = new URL(server.url);
    for (let round = 1; round <= rounds && run.checkAlive(`round ${round}`); round += 1) {
      // Portman fills examples with fresh random values on each conversion: each round is new data.
      const collection = await generateCollection(OPENAPI, portmanDir);
      collections += 1;
      generated += collection.main.length + collection.variations.length;
      const a = await prepareTenant(server.url, TENANTS.a.token, `fuzz-a-${round}`);
      const b = await prepareTenant(server.url, TENANTS.b.token, `fuzz-b-${round}`);
      const passes: Pass[] = [
        { name: 'tenant-a', token: TENANTS.a.token, ...a, items: [...collection.main, ...collection.variations] },
        { name: 'tenant-b', token: TENANTS.b.token, ...b, items: [...collection.main, ...collection.variations] },
        // Tenant B's token on tenant A's session: nothing of A's session may be readable or writable.
        {
          name: 'cross-tenant',
          token: TENANTS.b.token,
          sessionId: a.sessionId,
          runId: a.runId,
          items: collection.main,
          forbidSuccess: { kind: 'cross_tenant_access', onlyPaths: /^\/v1\/sessions\/[^/]+/ },
        },
        {
          name: 'anonymous',
          token: '',
          ...a,
          items: collection.main,
          forbidSuccess: { kind: 'unauthenticated_access', onlyPaths: /^\/(?:v1|metrics)/ },
        },
      ];
      for (const pass of passes) {
        if (!run.checkAlive(pass.name)) break;
        await runPass(run, collection, pass, server.url);
      }
      if (!run.checkAlive('raw')) break;
      await runRaw(run, base, a.sessionId, !short);
    }
    run.checkAlive('end');
    if (server.exitStatus() === undefined) {
      const health = await fetch(`${server.url}/healthz`).then(
        (r) => r.status,
        () => 0,
      );
      if (health !== 200)
        run.fail({
          kind: 'unhealthy_after',
          pass: 'end',
          method: 'GET',
          path: '/healthz',
          status: health,
          detail: 'the server did not answer /healthz 200 after the fuzz',
        });
    }
  } finally {
    await server.stop();
    await provider.close();
    rmSync(work, { recursive: true, force: true });
  }
  const byKind: Record<string, number> = {};
  const sample: Failure[] = [];
  const perKind: Record<string, number> = {};
  for (const failure of dedupe(run.failures)) {
    byKind[failure.kind] = (byKind[failure.kind] ?? 0) + 1;
    perKind[failure.kind] = (perKind[failure.kind] ?? 0) + 1;
    if ((perKind[failure.kind] ?? 0) <= SAMPLE_PER_KIND) sample.push(failure);
  }
  const operations = oracle.operations();
  const result = {
    fuzz: short ? 'short' : 'full',
    ok: run.failures.length === 0,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    rounds: collections,
    generated_requests: generated,
    requests: run.requests,
    operations_total: operations.length,
    operations_covered: run.covered.size,
    operations_not_covered: operations.map((o) => `${o.method} ${o.template}`).filter((o) => !run.covered.has(o)),
    failures: run.failures.length,
    distinct_failures: dedupe(run.failures).length,
    failures_by_kind: byKind,
    failure_sample: sample.map((f) => ({ ...f, detail: f.detail.slice(0, 400) })),
    portman_assertions_failed: run.portmanAssertionsFailed,
    portman_assertion_sample: run.portmanSample,
    note: 'failures: 5xx, status not documented for the operation, body or content type outside openapi.yaml (Ajv), a 2xx on another tenant\'s session or without a token, a raw malformed request not answered in {error:{code,message,details}}, a crash. portman_assertions_* are Portman\'s own generated tests (e.g. "fuzz variation expects 400"), informational.',
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return result.ok ? 0 : 1;
}

/** A session in the tenant's own workspace directory with one completed run, for the session and run path variables. */
async function prepareTenant(
  url: string,
  token: string,
  sessionId: string,
): Promise<{ sessionId: string; runId: string }> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const created = await fetch(`${url}/v1/sessions`, { method: 'POST', headers, body: JSON.stringify({ sessionId }) });
  if (created.status !== 201)
    throw new Error(`fuzz setup: create session answered ${created.status} ${await created.text()}`);
  const ran = await fetch(`${url}/v1/sessions/${sessionId}/runs`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ input: 'hello', wait: true }),
  });
  const body = (await ran.json()) as { run?: { runId?: string }; runId?: string };
  const runId = body.run?.runId ?? body.runId;
  if (ran.status !== 200 || typeof runId !== 'string')
    throw new Error(`fuzz setup: run answered ${ran.status} ${JSON.stringify(body)}`);
  return { sessionId, runId };
}

interface NewmanRequestArgs {
  request: {
    method: string;
    url: { getPath(unresolved?: boolean): string; toString(): string };
    body?: { raw?: string };
  };
  response?: { code: number; stream?: Buffer; headers: { get(name: string): string | undefined } };
  item: { name: string };
}

function runPass(run: FuzzRun, collection: FuzzCollection, pass: Pass, baseUrl: string): Promise<void> {
  const environment = {
    values: [
      { key: 'baseUrl', value: baseUrl, enabled: true },
      { key: 'token', value: pass.token, enabled: true },
      { key: 'bearerToken', value: pass.token, enabled: true },
      { key: 'sessionId', value: pass.sessionId, enabled: true },
      { key: 'runId', value: pass.runId, enabled: true },
    ],
  };
  return new Promise<void>((resolve, reject) => {
    const emitter = newman.run(
      {
        collection: collectionOf(collection, pass.items) as never,
        environment: environment as never,
        reporters: [],
        timeoutRequest: REQUEST_TIMEOUT_MS,
        ignoreRedirects: true,
      },
      (error) => (error ? reject(error) : resolve()),
    );
    emitter.on('request', (error: Error | null, args: NewmanRequestArgs) => {
      run.requests += 1;
      const method = args.request.method.toUpperCase();
      const path = args.request.url.getPath();
      const operation = run.oracle.match(method, path);
      if (operation) run.covered.add(`${operation.method} ${operation.template}`);
      if (error || args.response === undefined) {
        // The body that got no answer, so a sample can be replayed.
        const body = args.request.body?.raw?.slice(0, 500) ?? '';
        run.fail({
          kind: run.server.exitStatus() === undefined ? 'no_response' : 'crash',
          pass: pass.name,
          method,
          path: shorten(path),
          status: 0,
          detail: `${args.item.name}: ${error?.message ?? 'no response'}${body ? ` (body: ${body})` : ''}`,
        });
        return;
      }
      const { code } = args.response;
      const body = args.response.stream ?? Buffer.alloc(0);
      const problem = run.oracle.check(method, path, code, args.response.headers.get('content-type'), body);
      if (problem)
        run.fail({
          kind: problem.kind,
          pass: pass.name,
          method,
          path: shorten(path),
          status: code,
          detail: `${args.item.name}: ${problem.detail}`,
        });
      const forbid = pass.forbidSuccess;
      if (
        forbid &&
        code >= 200 &&
        code < 300 &&
        forbid.onlyPaths.test(path) &&
        (forbid.kind === 'cross_tenant_access' || operation?.secured !== false)
      ) {
        run.fail({
          kind: forbid.kind,
          pass: pass.name,
          method,
          path: shorten(path),
          status: code,
          detail: `${args.item.name}: answered ${code} ${body.toString('utf8').slice(0, 200)}`,
        });
      }
    });
    emitter.on('assertion', (error: Error | null, args: { assertion: string; item: { name: string } }) => {
      if (!error) return;
      run.portmanAssertionsFailed += 1;
      if (run.portmanSample.length < 5)
        run.portmanSample.push(`${pass.name}: ${args.item.name}: ${args.assertion}: ${error.message.slice(0, 160)}`);
    });
  });
}

async function runRaw(run: FuzzRun, base: URL, sessionId: string, full: boolean): Promise<void> {
  const token = TENANTS.a.token;
  for (const rawCase of rawCases(full)) {
    const text = rawCase.text.replaceAll('{{token}}', token).replaceAll('{{sessionId}}', sessionId);
    const requestLine = text.slice(0, text.indexOf('\r\n'));
    const [method = '?', target = '?'] = requestLine.split(' ');
    const path = target.split('?')[0] ?? target;
    run.requests += 1;
    const answer = await sendRaw(base.hostname, Number(base.port), text);
    const where = { pass: 'raw', method, path: shorten(path), status: answer.status };
    if (answer.status === 0) {
      run.fail({
        kind: run.server.exitStatus() === undefined ? 'no_response' : 'crash',
        ...where,
        detail: `${rawCase.name}: the connection closed without an HTTP answer`,
      });
      continue;
    }
    if (rawCase.expectStatus !== undefined && answer.status !== rawCase.expectStatus) {
      run.fail({
        kind: 'wrong_status',
        ...where,
        detail: `${rawCase.name}: expected ${rawCase.expectStatus}, got ${answer.status}: ${answer.body.toString('utf8').slice(0, 200)}`,
      });
      continue;
    }
    if (answer.status >= 500) {
      run.fail({
        kind: 'server_error_5xx',
        ...where,
        detail: `${rawCase.name}: ${answer.body.toString('utf8').slice(0, 300)}`,
      });
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.body.toString('utf8'));
    } catch {
      parsed = undefined;
    }
    const shapeProblem = parsed === undefined ? 'body is not JSON' : run.oracle.checkComponent('ErrorBody', parsed);
    if (answer.status >= 400 && shapeProblem !== undefined) {
      run.fail({
        kind: 'error_shape',
        ...where,
        detail: `${rawCase.name}: content-type ${answer.contentType ?? '(none)'}, ${shapeProblem}; body ${answer.body.toString('utf8').slice(0, 200)}`,
      });
      continue;
    }
    const operation = run.oracle.match(method, path);
    if (operation) {
      const problem = run.oracle.check(method, path, answer.status, answer.contentType, answer.body);
      if (problem) run.fail({ kind: problem.kind, ...where, detail: `${rawCase.name}: ${problem.detail}` });
    }
  }
}

function shorten(path: string): string {
  return path.length > 120 ? `${path.slice(0, 100)}...(${path.length} chars)` : path;
}

/** One failure per kind, pass-independent operation and status, and detail head (the same bug seen by each pass counts once). */
function dedupe(failures: readonly Failure[]): Failure[] {
  const seen = new Map<string, Failure>();
  for (const failure of failures) {
    const key = `${failure.kind} ${failure.method} ${failure.path.replace(/fuzz-[ab]-\d+/g, ':id')} ${failure.status} ${failure.detail.replace(/^[^:]*: /, '').slice(0, 80)}`;
    if (!seen.has(key)) seen.set(key, failure);
  }
  return [...seen.values()];
}

function mkdirp(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`fuzz failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(2);
  },
);

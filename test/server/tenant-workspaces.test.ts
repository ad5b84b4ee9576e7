import { mkdirSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeConfigSchema } from '../../src/config/code-config.js';
import { echoServerConfig } from '../mcp/mcp-test-helpers.js';
import { useTestServers } from '../support/run-helpers.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';

const A = 'token-tenant-a-sessions-0001';
const A_HOST = 'token-tenant-a-hostdirect-01';
const B = 'token-tenant-b-sessions-0001';
const ADMIN = 'token-tenant-ops-admin-00001';
const auth = (token: string) => ({ authorization: `Bearer ${token}` });

const TOKENS = [
  { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
  { token: A_HOST, principal: 'alice-ci', tenantId: 'tenant-a', scopes: ['sessions', 'host_direct'] },
  { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
  { token: ADMIN, principal: 'root', tenantId: 'ops', scopes: ['admin'] },
];

interface ErrorBody {
  error: { code: string; message: string; details: Record<string, unknown> };
}

/** The error body with the caller's own request text masked: what remains must not depend on the path. */
function masked(body: Partial<ErrorBody>, requested: string): Partial<ErrorBody> {
  if (!body.error) return body;
  return { error: { ...body.error, message: body.error.message.replace(`"${requested}"`, '"<requested>"') } };
}

describe('tenants own their workspaces (tokens of several tenants)', () => {
  let t: TestServer;
  let root: string;
  let shared: string;
  beforeAll(async () => {
    root = tempDir('a3s-tenants-');
    shared = tempDir('a3s-shared-');
    mkdirSync(join(root, 'tenant-b', 'proj'), { recursive: true });
    writeFileSync(join(root, 'tenant-b', 'secret.txt'), 'B-SECRET-CONTENT');
    writeFileSync(join(root, 'root-file.txt'), 'ROOT-LEVEL');
    mkdirSync(join(shared, 'common'), { recursive: true });
    symlinkSync(join(root, 'tenant-b'), join(shared, 'to-b'));
    t = await startTestServer({
      root,
      // The built-in default policy: read-only tools allowed, the rest asks.
      // The MCP echo fixture and its node_modules live in the repository: mounted read-only into the sandbox.
      config: {
        apiTokens: TOKENS,
        workspaceRoots: [root, shared],
        sharedWorkspaceRoots: [shared],
        defaultPermissionPolicy: undefined,
        sandbox: { readOnlyPaths: [process.cwd()] },
      },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  const create = (token: string, body: Record<string, unknown>) =>
    request(t.url).post('/v1/sessions').set(auth(token)).send(body);

  it('gives a session without workspace <root>/<tenant>, created on first use with mode 0700', async () => {
    const res = await create(A, {}).expect(201);
    expect(res.body.session.workspace).toBe(join(root, 'tenant-a'));
    expect(statSync(join(root, 'tenant-a')).mode & 0o777).toBe(0o700);
    const other = await create(B, {}).expect(201);
    expect(other.body.session.workspace).toBe(join(root, 'tenant-b'));
  });

  it('accepts the tenant own directory and its subdirectories, however spelled', async () => {
    await create(A, {}).expect(201);
    mkdirSync(join(root, 'tenant-a', 'proj', 'sub'), { recursive: true });
    const cases: Array<[string, string]> = [
      ['proj', join(root, 'tenant-a', 'proj')],
      ['proj/sub/', join(root, 'tenant-a', 'proj', 'sub')],
      ['.', join(root, 'tenant-a')],
      [join(root, 'tenant-a'), join(root, 'tenant-a')],
      [`${root}/tenant-a//proj/.`, join(root, 'tenant-a', 'proj')],
      [`${root}/tenant-b/../tenant-a/proj`, join(root, 'tenant-a', 'proj')],
    ];
    for (const [requested, expected] of cases) {
      const res = await create(A, { workspace: requested });
      expect({ requested, status: res.status, workspace: res.body.session?.workspace }).toEqual({
        requested,
        status: 201,
        workspace: expected,
      });
    }
  });

  it("refuses another tenant's directory, the shared parent, escapes and missing paths with one 404 answer", async () => {
    await create(A, {}).expect(201);
    symlinkSync(join(root, 'tenant-b'), join(root, 'tenant-a', 'link-to-b'));
    symlinkSync(root, join(root, 'tenant-a', 'link-to-root'));
    const refused = [
      join(root, 'tenant-b'),
      join(root, 'tenant-b', 'proj'),
      `${root}//tenant-b/.`,
      `${root}/tenant-b/`,
      `${root}/tenant-a/../tenant-b`,
      '../tenant-b',
      '../tenant-b/proj',
      '..',
      '../..',
      root,
      `${root}/.`,
      'link-to-b',
      'link-to-b/proj',
      join(root, 'tenant-a', 'link-to-b'),
      'link-to-root',
      '/',
      '/etc',
      '/tmp',
      '%2e%2e/tenant-b',
      '..%2ftenant-b',
      'link-to-b/../../tenant-b',
      join(shared, 'to-b'),
    ];
    const missing = [
      'does-not-exist',
      join(root, 'tenant-a', 'nope'),
      join(root, 'tenant-b', 'nope'),
      join(root, 'tenant-z'),
    ];
    const reference = masked(
      (await create(A, { workspace: 'does-not-exist' }).expect(404)).body as ErrorBody,
      'does-not-exist',
    );
    expect(reference.error).toMatchObject({ code: 'WORKSPACE_NOT_FOUND', details: { field: 'workspace' } });
    for (const requested of [...refused, ...missing]) {
      const res = await create(A, { workspace: requested });
      expect({ requested, status: res.status, body: masked(res.body as ErrorBody, requested) }).toEqual({
        requested,
        status: 404,
        body: reference,
      });
      // Nothing about the canonical target leaks into the message.
      expect(res.body.error.message).not.toContain('resolves to');
    }
    // The same holds the other way round.
    const fromB = await create(B, { workspace: join(root, 'tenant-a') }).expect(404);
    expect(fromB.body.error.code).toBe('WORKSPACE_NOT_FOUND');
  });

  it('lets an admin name any workspace inside the roots, and only there', async () => {
    expect(
      (await create(ADMIN, { workspace: join(root, 'tenant-b', 'proj') }).expect(201)).body.session.workspace,
    ).toBe(join(root, 'tenant-b', 'proj'));
    expect((await create(ADMIN, { workspace: root }).expect(201)).body.session.workspace).toBe(root);
    // Without a workspace, an admin's session for a tenant lands in that tenant's directory.
    expect((await create(ADMIN, { tenantId: 'tenant-b' }).expect(201)).body.session.workspace).toBe(
      join(root, 'tenant-b'),
    );
    expect((await create(ADMIN, {}).expect(201)).body.session.workspace).toBe(join(root, 'ops'));
    expect((await create(ADMIN, { workspace: '/etc' }).expect(400)).body.error.code).toBe('WORKSPACE_OUTSIDE_ROOTS');
    expect((await create(ADMIN, { tenantId: '../x' }).expect(400)).body.error).toMatchObject({
      code: 'SESSION_CONFIGURATION_ERROR',
      details: { field: 'tenantId' },
    });
  });

  it('lets every tenant use a shared root, but not a symlink in it into another tenant', async () => {
    for (const token of [A, B]) {
      expect((await create(token, { workspace: shared }).expect(201)).body.session.workspace).toBe(shared);
      expect((await create(token, { workspace: join(shared, 'common') }).expect(201)).body.session.workspace).toBe(
        join(shared, 'common'),
      );
    }
    expect((await create(A, { workspace: join(shared, 'to-b') }).expect(404)).body.error.code).toBe(
      'WORKSPACE_NOT_FOUND',
    );
    // B reaches its own directory through it: the canonical directory is what counts.
    expect((await create(B, { workspace: join(shared, 'to-b') }).expect(201)).body.session.workspace).toBe(
      join(root, 'tenant-b'),
    );
  });

  it("keeps the default read-only tools out of another tenant's files", async () => {
    const ws = (await create(A, {}).expect(201)).body.session.workspace as string;
    writeFileSync(join(ws, 'mine.txt'), 'A-OWN-CONTENT');
    const id = (await create(A, {}).expect(201)).body.session.id as string;
    t.fake.script(
      {
        toolCalls: [
          { id: 'abs', name: 'read', arguments: { file_path: join(root, 'tenant-b', 'secret.txt') } },
          { id: 'rel', name: 'read', arguments: { file_path: '../tenant-b/secret.txt' } },
          { id: 'link', name: 'read', arguments: { file_path: 'link-to-b/secret.txt' } },
          { id: 'up', name: 'read', arguments: { file_path: '../root-file.txt' } },
          { id: 'ls', name: 'ls', arguments: { path: '..' } },
          { id: 'grep', name: 'grep', arguments: { pattern: 'B-SECRET', path: '../tenant-b' } },
          { id: 'own', name: 'read', arguments: { file_path: 'mine.txt' } },
        ],
      },
      { text: 'done' },
    );
    await request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .set(auth(A))
      .send({ input: 'read everything', wait: true })
      .expect(200);
    t.fake.assertDone();
    const messages = t.fake.requests.at(-1)?.body.messages ?? [];
    const results = new Map(
      messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id as string, JSON.stringify(m.content)]),
    );
    expect(results.size).toBe(7);
    for (const callId of ['abs', 'rel', 'link', 'up', 'ls', 'grep']) {
      const output = results.get(callId) ?? '';
      expect(output, callId).not.toContain('B-SECRET-CONTENT');
      expect(output, callId).not.toContain('ROOT-LEVEL');
      expect(output, callId).toMatch(/outside the workspace/);
    }
    expect(results.get('own')).toContain('A-OWN-CONTENT');
  });

  it("refuses a session's stdio MCP server whose cwd leaves the tenant's space", async () => {
    const ws = (await create(A_HOST, {}).expect(201)).body.session.workspace as string;
    mkdirSync(join(ws, 'tools'), { recursive: true });
    for (const cwd of [join(root, 'tenant-b'), '../tenant-b', root, '/etc', 'link-to-b', 'missing-dir']) {
      const server = echoServerConfig('echo');
      const body = { ...server, transport: { ...server.transport, cwd } };
      const atCreate = await create(A_HOST, { mcpServers: [body] }).expect(404);
      expect(atCreate.body.error).toMatchObject({
        code: 'WORKSPACE_NOT_FOUND',
        details: { field: 'mcpServers[0].transport.cwd' },
      });
      const id = (await create(A_HOST, {}).expect(201)).body.session.id as string;
      const added = await request(t.url).post(`/v1/sessions/${id}/mcp`).set(auth(A_HOST)).send(body).expect(404);
      expect(added.body.error).toMatchObject({ code: 'WORKSPACE_NOT_FOUND', details: { field: 'transport.cwd' } });
    }
    const id = (await create(A_HOST, {}).expect(201)).body.session.id as string;
    const server = echoServerConfig('echo');
    await request(t.url)
      .post(`/v1/sessions/${id}/mcp`)
      .set(auth(A_HOST))
      .send({ ...server, transport: { ...server.transport, cwd: 'tools' } })
      .expect(201);
  });
});

describe('restored sessions keep their workspace, and a swapped path cannot carry them out', () => {
  const start = useTestServers();

  it('resumes in the stored workspace, an admin-chosen one included, and refuses one that now resolves elsewhere', async () => {
    const root = tempDir('a3s-tenants-restore-');
    const dataDir = tempDir('a3s-tenants-data-');
    mkdirSync(join(root, 'tenant-a', 'kept'), { recursive: true });
    mkdirSync(join(root, 'tenant-a', 'swapped'), { recursive: true });
    mkdirSync(join(root, 'tenant-b', 'proj'), { recursive: true });
    const options = { root, dataDir, config: { apiTokens: TOKENS } };
    const first = await start(options);
    const created = async (token: string, body: Record<string, unknown>) =>
      (
        await request(first.url)
          .post('/v1/sessions')
          .set(auth(token))
          .send({ autoSave: true, ...body })
          .expect(201)
      ).body.session.id as string;
    const kept = await created(A, { workspace: 'kept' });
    const swapped = await created(A, { workspace: 'swapped' });
    const adminChosen = await created(ADMIN, { tenantId: 'tenant-a', workspace: join(root, 'tenant-b', 'proj') });
    await first.close();

    // Between the runs, the tenant's directory is replaced by a symlink into the other tenant's space.
    renameSync(join(root, 'tenant-a', 'swapped'), join(root, 'tenant-a', 'swapped-old'));
    symlinkSync(join(root, 'tenant-b'), join(root, 'tenant-a', 'swapped'));

    const second = await start(options);
    const resume = (id: string) =>
      request(second.url).post('/v1/sessions').set(auth(A)).send({ sessionId: id, resume: true });
    expect((await resume(kept).expect(201)).body.session.workspace).toBe(join(root, 'tenant-a', 'kept'));
    expect((await resume(adminChosen).expect(201)).body.session.workspace).toBe(join(root, 'tenant-b', 'proj'));
    const refused = await resume(swapped).expect(409);
    expect(refused.body.error).toMatchObject({ code: 'WORKSPACE_CHANGED', details: { field: 'workspace' } });
    // A plain read of the session (hydration from the store) is refused the same way.
    expect((await request(second.url).get(`/v1/sessions/${swapped}`).set(auth(A))).status).not.toBe(200);
  });
});

describe('one tenant or no tokens: nothing changes', () => {
  const start = useTestServers();

  for (const [label, apiTokens] of [
    ['no tokens', []],
    ['one tenant', [TOKENS[0], TOKENS[1]]],
  ] as const) {
    it(`${label}: the first root is the default workspace and paths resolve against it`, async () => {
      const root = tempDir('a3s-single-');
      mkdirSync(join(root, 'other', 'proj'), { recursive: true });
      const t = await start({ root, config: { apiTokens } });
      const headers = apiTokens.length ? auth(A) : {};
      const create = (body: Record<string, unknown>) => request(t.url).post('/v1/sessions').set(headers).send(body);
      expect((await create({}).expect(201)).body.session.workspace).toBe(root);
      expect((await create({ workspace: 'other/proj' }).expect(201)).body.session.workspace).toBe(
        join(root, 'other', 'proj'),
      );
      expect((await create({ workspace: root }).expect(201)).body.session.workspace).toBe(root);
      expect((await create({ workspace: 'missing' }).expect(400)).body.error.code).toBe('SESSION_CONFIGURATION_ERROR');
      const outside = (await create({ workspace: '/etc' }).expect(400)).body.error;
      expect(outside.code).toBe('WORKSPACE_OUTSIDE_ROOTS');
      if (apiTokens.length === 0) {
        // The anonymous loopback caller has every scope: it is told the roots and how to set them.
        expect(outside.message).toContain(
          `(${root}); the operator sets them with workspace_roots or A3S_WORKSPACE_ROOTS`,
        );
        expect(outside.details).toEqual({ field: 'workspace', roots: [root] });
      } else {
        // A sessions-only caller gets no map of the host's layout; one with host_direct does.
        expect(outside.message).toBe('workspace: "/etc" is outside the configured workspace roots');
        expect(outside.details).toEqual({ field: 'workspace' });
        const host = await request(t.url)
          .post('/v1/sessions')
          .set(auth(A_HOST))
          .send({ workspace: '/etc' })
          .expect(400);
        expect(host.body.error.message).toContain(`outside the configured workspace roots (${root})`);
        expect(host.body.error.details).toEqual({ field: 'workspace', roots: [root] });
      }
    });
  }
});

describe('tenant ids name directories', () => {
  it('refuses, with tokens of several tenants, a tenantId that is not a safe path segment', async () => {
    const bad = [
      ...TOKENS,
      { token: 'token-tenant-bad-000000001', principal: 'eve', tenantId: '../etc', scopes: ['sessions'] },
    ];
    const parsed = CodeConfigSchema.safeParse({ apiTokens: bad });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['apiTokens.4.tenantId']);
    // One tenant keeps whatever id it had: it gets no directory of its own.
    expect(CodeConfigSchema.safeParse({ apiTokens: [{ ...bad[4], tenantId: 'acme corp/1' }] }).success).toBe(true);
  });
});

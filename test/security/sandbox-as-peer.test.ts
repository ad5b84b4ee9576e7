import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterSecretsOf } from '../../src/cluster/cluster-secrets.js';
import { ForwardedHeaders } from '../../src/cluster/forwarded-header.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startRedisNodes } from '../support/redis-target.js';
import { TEST_CLUSTER_SECRET, type TestServer } from '../support/test-server.js';

const TOKEN = 'tenant-a-sandbox-peer-token-012345';
const auth = { authorization: `Bearer ${TOKEN}` };

/** A raw HTTP request from inside the sandbox (bash's /dev/tcp: no curl needed), printing the status line and body. */
function rawRequest(port: number, path: string, headers: Record<string, string>): string {
  const lines = [
    `GET ${path} HTTP/1.1`,
    'Host: 127.0.0.1',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    'Connection: close',
    '',
    '',
  ].join('\\r\\n');
  return `exec 3<>/dev/tcp/127.0.0.1/${port} && printf '${lines}' >&3 && { head -c 600 <&3; echo; }`;
}

// The model's commands run in bwrap with sandbox.network = "allowed": they share the node's loopback, so they
// can reach every node's port, as a peer can. They must not be able to pass as one.
describe('a sandboxed command with network allowed cannot pass as a peer node', () => {
  let fake: FakeProvider;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    [a, b] = await startRedisNodes(fake, 'a3s-sbx-peer', {
      apiTokens: [{ token: TOKEN, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] }],
      sandbox: { mode: 'required', network: 'allowed' },
    });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await fake?.close();
  });

  it('forged and copied hop headers are 401, no token is 401, and the secret is nowhere the command can read', async () => {
    await request(a.url).post('/v1/sessions').set(auth).send({ sessionId: 'victim' }).expect(201);
    await request(a.url).post('/v1/sessions').set(auth).send({ sessionId: 'attacker' }).expect(201);
    const port = Number(new URL(b.url).port);
    const path = '/v1/sessions/victim';
    // Signed with a guessed secret; and a well-formed header from a key the attacker does not have.
    const guessed = new ForwardedHeaders(
      clusterSecretsOf({ id: '1', secret: 'guessed-secret-guessed-secret-000000' }),
      'node-a',
    ).sign('GET', path, '127.0.0.1');
    // A real signature (as if one leaked through a log): valid once, and it carries no credentials of its own.
    const leaked = new ForwardedHeaders(clusterSecretsOf({ id: '1', secret: TEST_CLUSTER_SECRET }), 'node-a').sign(
      'GET',
      path,
      '127.0.0.1',
    );
    const commands = [
      rawRequest(port, path, { 'A3S-Forwarded': guessed }),
      rawRequest(port, path, { 'A3S-Forwarded': 'v1;1;0;1;node-a;127.0.0.1;n;sig' }),
      rawRequest(port, path, { 'X-Forwarded-For': '10.0.0.7', 'A3S-Route': 'no-forward' }),
      rawRequest(port, path, { 'A3S-Forwarded': leaked }),
      'env; cat /proc/1/environ 2>&1 | tr "\\0" "\\n"; cat /proc/*/environ 2>/dev/null | tr "\\0" "\\n" | head -c 20000; echo done-looking',
    ];
    fake.script(
      ...commands.map((command, i) => ({ toolCalls: [{ id: `peer_${i}`, name: 'bash', arguments: { command } }] })),
      { text: 'tried' },
    );
    const run = await request(a.url)
      .post('/v1/sessions/attacker/runs')
      .set(auth)
      .send({ input: 'pretend to be a node', wait: true })
      .expect(200);
    expect(run.body.result.text).toBe('tried');
    const outputs = (fake.requests.at(-1)?.body.messages ?? [])
      .filter((m) => m.role === 'tool')
      .map((m) => String(m.content));
    expect(outputs).toHaveLength(commands.length);
    const [forged, malformed, unsigned, copied, looked] = outputs;
    expect(forged).toContain('HTTP/1.1 401');
    expect(forged).toContain('FORWARDED_INVALID');
    expect(malformed).toContain('HTTP/1.1 401');
    expect(malformed).toContain('FORWARDED_INVALID');
    // Loopback is no credential, and no header widens anything: without a token it is 401.
    expect(unsigned).toContain('HTTP/1.1 401');
    expect(unsigned).toContain('UNAUTHORIZED');
    // Even a genuine hop signature does not authenticate: the owner checks the client's own credentials.
    expect(copied).toContain('HTTP/1.1 401');
    expect(copied).not.toContain('"session"');
    // The command's environment and every /proc it can see hold no cluster secret (and no token).
    expect(looked).toContain('done-looking');
    expect(looked).not.toContain(TEST_CLUSTER_SECRET);
    expect(looked).not.toContain('A3S_CLUSTER_SECRET');
    expect(looked).not.toContain(TOKEN);
  });
});

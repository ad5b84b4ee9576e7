import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterSecretsOf } from '../../src/cluster/cluster-secrets.js';
import { ForwardedHeaders } from '../../src/cluster/forwarded-header.js';
import { redisServerConfig } from '../support/redis-target.js';
import { startTestServer, TEST_CLUSTER_SECRET, type TestServer } from '../support/test-server.js';

const TOKEN = 'tenant-a-forwarded-client-token-0123';
const PATH = '/v1/sessions/none';

/** One keep-alive connection that sends a request and reads the status line of its answer (the socket stays open). */
async function openAndAsk(url: string, forwarded: string): Promise<{ socket: Socket; status: number }> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let data = '';
  const status = await new Promise<number>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      data += chunk.toString('utf8');
      const match = /^HTTP\/1\.1 (\d{3})/.exec(data);
      if (match && data.includes('\r\n\r\n')) resolve(Number(match[1]));
    });
    socket.once('error', reject);
    socket.write(
      `GET ${PATH} HTTP/1.1\r\nHost: ${new URL(url).host}\r\nAuthorization: Bearer ${TOKEN}\r\nA3S-Forwarded: ${forwarded}\r\nConnection: keep-alive\r\n\r\n`,
    );
  });
  return { socket, status };
}

// A peer node carries the requests of many clients: what limits one client must see the client the hop's
// signature names, never the peer's own address (and never an unsigned header).
describe('a forwarded request counts for the client its signature names', () => {
  let t: TestServer;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    t = await startTestServer({
      config: {
        ...redisServerConfig(),
        redisKeyPrefix: `a3s-fwd-client-${Math.random().toString(36).slice(2)}:`,
        apiTokens: [{ token: TOKEN, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] }],
        limits: { maxConnectionsPerAddress: 2 },
      },
    });
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await t?.close();
  });

  it('limits.max_connections_per_address applies per signed client address across the hop', async () => {
    const signer = new ForwardedHeaders(clusterSecretsOf({ id: '1', secret: TEST_CLUSTER_SECRET }), 'node-x');
    const ask = async (client: string) => {
      const answer = await openAndAsk(t.url, signer.sign('GET', PATH, client));
      sockets.push(answer.socket);
      return answer.status;
    };
    // Two connections for one client pass the guard (then the session is unknown: 404).
    expect(await ask('10.9.9.9')).toBe(404);
    expect(await ask('10.9.9.9')).toBe(404);
    // The third for the same client is over its cap, though the peer (loopback here) is exempt.
    expect(await ask('10.9.9.9')).toBe(429);
    // Another client through the same peer is counted on its own.
    expect(await ask('10.9.9.8')).toBe(404);
  });
});

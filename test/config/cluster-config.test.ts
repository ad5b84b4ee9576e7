import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clusterSecretsOf, loadClusterSecrets } from '../../src/cluster/cluster-secrets.js';
import { ConfigError, type ConfigProblem } from '../../src/config/config-error.js';
import { loadConfig } from '../../src/config/load-config.js';
import { tempDir } from '../support/test-server.js';

const SECRET = 'cluster-secret-for-tests-0123456789';

async function problemsOf(options: Parameters<typeof loadConfig>[0]): Promise<readonly ConfigProblem[]> {
  const error = await loadConfig(options).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).problems;
}

describe('cluster {} config: the shared secret and the peers a node forwards to', () => {
  it('requires a secret with Redis, naming cluster.secret and both ways to set it', async () => {
    const problems = await problemsOf({ env: { REDIS_URL: 'redis://127.0.0.1:6379' }, cwd: '/' });
    expect(problems).toEqual([
      expect.objectContaining({
        path: 'cluster.secret',
        message: expect.stringMatching(/A3S_CLUSTER_SECRET.*A3S_CLUSTER_SECRET_FILE/),
      }),
    ]);
    // One node without Redis needs none.
    await expect(loadConfig({ env: {}, cwd: '/' })).resolves.toMatchObject({ cluster: { peerUrls: [] } });
  });

  it('reads the secret, its id and the peer URLs from the environment over the file', async () => {
    const configText = 'cluster {\n  lease_ttl_ms = 1000\n  secret_file = "/nonexistent"\n}\n';
    const config = await loadConfig({
      env: {
        REDIS_URL: 'redis://127.0.0.1:6379',
        A3S_CLUSTER_SECRET: SECRET,
        A3S_CLUSTER_SECRET_ID: 'k2',
        A3S_CLUSTER_PEER_URLS: 'http://10.0.0.7:8080, http://*.a3s.svc:8080,,http://127.0.0.1:*',
      },
      cwd: '/',
      configText,
    });
    expect(config.cluster).toEqual({
      leaseTtlMs: 1000,
      nodeTtlMs: 10_000,
      secret: SECRET,
      secretId: 'k2',
      peerUrls: ['http://10.0.0.7:8080', 'http://*.a3s.svc:8080', 'http://127.0.0.1:*'],
    });
  });

  it('names a short secret, a peer URL with a path, a previous secret without its id, and both secret kinds', async () => {
    const configText = `cluster {\n  secret = "short"\n  secret_file = "/x"\n  previous_secret = "${SECRET}"\n  peer_urls = ["http://a:1/path"]\n}\n`;
    const problems = await problemsOf({ env: {}, cwd: '/', configText });
    expect(problems.map((p) => p.path)).toEqual(
      expect.arrayContaining([
        'cluster.secret',
        'cluster.secretFile',
        'cluster.previousSecretId',
        'cluster.peerUrls[0]',
      ]),
    );
    expect(problems.every((p) => p.line !== undefined)).toBe(true);
  });

  it('reads a secret file at startup; a missing or short one is a ConfigError naming it', () => {
    const dir = tempDir('a3s-secret-');
    writeFileSync(join(dir, 'ok'), `${SECRET}\n`);
    writeFileSync(join(dir, 'short'), 'abc\n');
    const secrets = loadClusterSecrets({
      leaseTtlMs: 1000,
      nodeTtlMs: 1000,
      secretFile: join(dir, 'ok'),
      secretId: '1',
      peerUrls: [],
    });
    expect(secrets?.verify('1', 'payload', clusterSecretsOf({ id: '1', secret: SECRET }).sign('payload'))).toBe(true);
    expect(() =>
      loadClusterSecrets({
        leaseTtlMs: 1000,
        nodeTtlMs: 1000,
        secretFile: join(dir, 'short'),
        secretId: '1',
        peerUrls: [],
      }),
    ).toThrow(/at least 32/);
    expect(() =>
      loadClusterSecrets({
        leaseTtlMs: 1000,
        nodeTtlMs: 1000,
        secretFile: join(dir, 'missing'),
        secretId: '1',
        peerUrls: [],
      }),
    ).toThrow(ConfigError);
  });

  it('signs with the current secret and verifies the previous one during a rotation, nothing else', () => {
    const old = clusterSecretsOf({ id: 'k1', secret: SECRET });
    const rotated = clusterSecretsOf({ id: 'k2', secret: `${SECRET}-next` }, { id: 'k1', secret: SECRET });
    expect(rotated.signingId).toBe('k2');
    // Both are redacted from tool output while the rotation lasts.
    expect(rotated.values).toEqual([`${SECRET}-next`, SECRET]);
    expect(rotated.verify('k1', 'p', old.sign('p'))).toBe(true);
    expect(rotated.verify('k2', 'p', rotated.sign('p'))).toBe(true);
    expect(old.verify('k2', 'p', rotated.sign('p'))).toBe(false);
    expect(rotated.verify('k1', 'q', old.sign('p'))).toBe(false);
    expect(rotated.verify('k3', 'p', old.sign('p'))).toBe(false);
    expect(rotated.verify('k1', 'p', 'not-a-mac')).toBe(false);
  });
});

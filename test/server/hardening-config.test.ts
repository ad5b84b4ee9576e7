import { describe, expect, it } from 'vitest';
import { CodeConfigSchema } from '../../src/config/code-config.js';
import { loadConfig } from '../../src/config/load-config.js';
import { TrustedProxies } from '../../src/server/client-address.js';

describe('hardening configuration keys', () => {
  it('documents its defaults: 10 s headers and body, 72 s keep-alive, 1024 connections per address, 256 KiB input, no proxy trusted', () => {
    const config = CodeConfigSchema.parse({});
    expect(config.limits).toMatchObject({
      headersTimeoutMs: 10_000,
      bodyTimeoutMs: 10_000,
      keepAliveTimeoutMs: 72_000,
      maxConnectionsPerAddress: 1024,
      maxInputBytes: 262_144,
    });
    expect(config.trustProxy).toBe(false);
  });

  it('reads the docker-compose line (trust_proxy in ACL text) and snake_case limits', async () => {
    const config = await loadConfig({
      env: {},
      cwd: process.cwd(),
      configText:
        'trust_proxy = ["uniquelocal", "203.0.113.0/24"]\nlimits {\n  body_timeout_ms = 5000\n  max_connections_per_address = 64\n  max_input_bytes = 1024\n}\n',
    });
    expect(config.trustProxy).toEqual(['uniquelocal', '203.0.113.0/24']);
    expect(config.limits).toMatchObject({ bodyTimeoutMs: 5000, maxConnectionsPerAddress: 64, maxInputBytes: 1024 });
  });

  it('refuses a trust_proxy entry that is no address, CIDR or known name, naming the key', async () => {
    await expect(
      loadConfig({ env: {}, cwd: process.cwd(), configText: 'trust_proxy = ["nginx.internal"]\n' }),
    ).rejects.toThrow(/trust_?[pP]roxy/);
    expect(CodeConfigSchema.safeParse({ trustProxy: ['10.0.0.0/33'] }).success).toBe(false);
    expect(CodeConfigSchema.safeParse({ trustProxy: ['999.1.1.1'] }).success).toBe(false);
    expect(CodeConfigSchema.safeParse({ trustProxy: ['fd00::/8', '::1'] }).success).toBe(true);
  });

  it('trusts the peers trust_proxy names, as Fastify does', () => {
    const proxies = new TrustedProxies(['uniquelocal', '203.0.113.7']);
    expect(proxies.trusts('172.18.0.5')).toBe(true);
    expect(proxies.trusts('::ffff:10.1.2.3')).toBe(true);
    expect(proxies.trusts('203.0.113.7')).toBe(true);
    expect(proxies.trusts('203.0.113.8')).toBe(false);
    expect(proxies.trusts('8.8.8.8')).toBe(false);
    expect(new TrustedProxies(false).trusts('10.0.0.1')).toBe(false);
    expect(new TrustedProxies(true).trusts('8.8.8.8')).toBe(true);
  });
});

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/load-config.js';

interface Service {
  image?: string;
  build?: unknown;
  privileged?: boolean;
  cap_add?: string[];
  security_opt?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  pids_limit?: number;
  mem_limit?: string;
}

const COMPOSE = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const NODES = ['server-a', 'server-b'];
const NGINX = readFileSync('deploy/nginx.conf', 'utf8');

describe('docker-compose.yml', () => {
  it('runs both nodes from the image with the seccomp profile, unconfined AppArmor and system paths, never privileged', () => {
    for (const name of NODES) {
      const node = COMPOSE.services[name] as Service;
      expect(node.image).toBe('a3s-code-server');
      expect(node.security_opt).toEqual([
        'seccomp=deploy/seccomp-bwrap.json',
        'apparmor=unconfined',
        'systempaths=unconfined',
      ]);
      expect(node.privileged).not.toBe(true);
      expect(node.cap_add).toBeUndefined();
      // The container bounds the node as a whole; commands get rlimits (sandbox.cgroups = "optional").
      expect(node.pids_limit).toBeGreaterThan(0);
      expect(node.mem_limit).toBeDefined();
    }
    for (const service of Object.values(COMPOSE.services)) expect(service.privileged).not.toBe(true);
    // The profile named is the one shipped.
    expect(JSON.parse(readFileSync('deploy/seccomp-bwrap.json', 'utf8')).defaultAction).toBe('SCMP_ACT_ERRNO');
  });

  it('gives each node the cluster secret, peer URLs, its own id and advertise URL, trust_proxy, Redis and the sandbox settings', () => {
    const advertised: string[] = [];
    for (const name of NODES) {
      const env = (COMPOSE.services[name] as Service).environment ?? {};
      expect(env.A3S_CLUSTER_SECRET).toMatch(/^\$\{A3S_CLUSTER_SECRET:\?/);
      expect(env.A3S_CLUSTER_PEER_URLS).toBe('http://server-a:8080,http://server-b:8080');
      expect(env.A3S_API_TOKENS).toBe('${A3S_API_TOKENS:-}');
      expect(env.REDIS_URL).toBe('redis://redis:6379');
      expect(env.A3S_CONFIG_TEXT).toContain('trust_proxy');
      expect(env.A3S_WORKSPACE_ROOTS).toBe('/workspace');
      expect(env.A3S_NODE_ID).toBe(name.replace('server', 'node'));
      expect(env.A3S_ADVERTISE_URL).toBe(`http://${name}:8080`);
      advertised.push(env.A3S_ADVERTISE_URL as string);
      expect(env).toMatchObject({ A3S_SANDBOX_MODE: 'required', A3S_SANDBOX_CGROUPS: 'optional' });
    }
    expect(advertised.join(',')).toBe((COMPOSE.services['server-a'] as Service).environment?.A3S_CLUSTER_PEER_URLS);
  });

  it("the nodes' environment loads as a valid configuration (compose's defaults substituted)", async () => {
    const raw = (COMPOSE.services['server-a'] as Service).environment ?? {};
    const substitute = (text: string): string =>
      text.replace(
        /\$\{([A-Z0-9_]+)(?::-([^}]*)|:\?[^}]*)?\}/g,
        (_, name: string, fallback?: string) =>
          ({
            A3S_CLUSTER_SECRET: 'c'.repeat(40),
            A3S_API_TOKENS: JSON.stringify([
              { token: 'compose-token-0123456789', principal: 'me', tenantId: 'default', scopes: ['sessions'] },
            ]),
          })[name] ??
          fallback ??
          '',
      );
    const env = Object.fromEntries(Object.entries(raw).map(([key, value]) => [key, substitute(String(value))]));
    const config = await loadConfig({ env: { ...env, A3S_HOST: '0.0.0.0', A3S_DATA_DIR: '/data' }, cwd: '/app' });
    expect(config.sandbox).toMatchObject({ mode: 'required', cgroups: 'optional', network: 'none' });
    expect(config.cluster.peerUrls).toEqual(['http://server-a:8080', 'http://server-b:8080']);
    expect(config.workspaceRoots).toEqual(['/workspace']);
  });

  it('mounts one shared workspace at the same path on both nodes', () => {
    const mounts = NODES.map((name) =>
      ((COMPOSE.services[name] as Service).volumes ?? []).find((volume) => volume.endsWith(':/workspace')),
    );
    expect(mounts[0]).toBeDefined();
    expect(mounts[1]).toBe(mounts[0]);
  });

  it('puts plain round-robin nginx in front with deploy/nginx.conf', () => {
    const lb = COMPOSE.services.lb as Service;
    expect(lb.image).toMatch(/^nginx:/);
    expect(lb.volumes).toContain('./deploy/nginx.conf:/etc/nginx/nginx.conf:ro');
    const upstream = /upstream a3s \{([^}]*)\}/.exec(NGINX)?.[1] ?? '';
    expect(
      upstream
        .trim()
        .split('\n')
        .map((line) => line.trim()),
    ).toEqual(['server server-a:8080;', 'server server-b:8080;']);
    // Round-robin is nginx's default: no other balancing method, no stickiness.
    expect(NGINX).not.toMatch(/\b(ip_hash|hash|least_conn|random|sticky)\b/);
  });
});

import { networkInterfaces } from 'node:os';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CodeConfig } from '../config/code-config.js';
import { CodeError } from '../errors.js';
import { originHostFor, parseHostValue, parseOriginValue, type HostValue } from './request-host.js';

/** Host names every server answers to, on any port. */
export const LOOPBACK_HOST_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** Routes a probe may call with any Host (a kubelet sends the pod IP): GET/HEAD only, Origin rules still apply. */
export const HOST_EXEMPT_ROUTES: readonly string[] = ['/healthz', '/readyz'];

// `Sec-Fetch-Site` values a browser sends for requests a page of another origin started.
const FOREIGN_FETCH_SITES = new Set(['cross-site', 'same-site']);

/** What the guard needs from the configuration. */
export type BrowserGuardConfig = Pick<CodeConfig, 'host' | 'advertiseUrl' | 'allowedHosts' | 'allowedOrigins'>;

/** The headers a decision reads. */
export interface GuardedRequest {
  method: string;
  /** The matched route pattern (e.g. `/healthz`), undefined for unrouted requests. */
  route: string | undefined;
  host: string | undefined;
  origin: string | undefined;
  secFetchSite: string | undefined;
}

interface HostRule {
  hostname: string;
  /** Undefined: any port. */
  port: string | undefined;
}

function hostRule(entry: string): HostRule | undefined {
  const parsed = parseHostValue(entry);
  return parsed ? { hostname: parsed.hostname, port: parsed.port } : undefined;
}

function bracketed(address: string): string {
  return address.includes(':') ? `[${address}]` : address;
}

/** Addresses of this machine's interfaces: what a client reaching a wildcard bind (0.0.0.0, ::) by IP sends as Host. */
function interfaceAddresses(family: 'IPv4' | 'any'): string[] {
  const out: string[] = [];
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? [])
      if (family === 'any' || entry.family === 'IPv4')
        out.push(bracketed(entry.address.split('%')[0] ?? entry.address));
  }
  return out;
}

/**
 * The Host names of a configuration: loopback names, the bind host (a wildcard bind: this machine's
 * interface addresses), advertiseUrl's host (other nodes' clients are sent there by 421 answers) and
 * `allowed_hosts`. A bare name matches any port; `name:port` that port only.
 */
export function allowedHostRules(config: BrowserGuardConfig): HostRule[] {
  const entries = [...LOOPBACK_HOST_NAMES];
  const bind = config.host.trim();
  if (bind === '0.0.0.0') entries.push(...interfaceAddresses('IPv4'));
  else if (bind === '::' || bind === '[::]' || bind === '') entries.push(...interfaceAddresses('any'));
  else entries.push(bracketed(bind.replace(/^\[|\]$/g, '')));
  if (config.advertiseUrl !== undefined && URL.canParse(config.advertiseUrl))
    entries.push(new URL(config.advertiseUrl).hostname);
  entries.push(...config.allowedHosts);
  const rules: HostRule[] = [];
  for (const entry of entries) {
    const rule = hostRule(entry);
    if (rule && !rules.some((r) => r.hostname === rule.hostname && r.port === rule.port)) rules.push(rule);
  }
  return rules;
}

/** Host header values whose verdict is remembered. */
const HOST_MEMO_SIZE = 256;

/**
 * Decides whether a request may be served: its Host must be allowed (DNS rebinding sends the attacker's
 * name), and a browser request started by another origin (`Origin` not allowed, or `Sec-Fetch-Site:
 * cross-site|same-site` without an allowed Origin) is refused. Requests without Origin (curl, SDKs, other
 * servers) pass. Always on, tokens or not; the lists are extended by config.
 */
export class BrowserGuard {
  private readonly hosts: HostRule[];
  private readonly origins: Set<string>;
  private readonly seenHosts = new Map<string, HostValue | undefined>();

  constructor(config: BrowserGuardConfig) {
    this.hosts = allowedHostRules(config);
    this.origins = new Set(config.allowedOrigins.flatMap((entry) => parseOriginValue(entry)?.origin ?? []));
  }

  /** The Host header parsed when it is allowed, else undefined (remembered per header value: clients send a few). */
  allowedHost(raw: string | undefined): HostValue | undefined {
    if (raw === undefined) return undefined;
    if (this.seenHosts.has(raw)) return this.seenHosts.get(raw);
    const parsed = parseHostValue(raw);
    const host =
      parsed &&
      this.hosts.some(
        (rule) => rule.hostname === parsed.hostname && (rule.port === undefined || rule.port === parsed.port),
      )
        ? parsed
        : undefined;
    // Bounded: a client sending ever new Host values only empties the memo.
    if (this.seenHosts.size >= HOST_MEMO_SIZE) this.seenHosts.clear();
    this.seenHosts.set(raw, host);
    return host;
  }

  /** Throw HOST_NOT_ALLOWED or ORIGIN_NOT_ALLOWED (both 403) for a request that must not be served. */
  check(request: GuardedRequest): void {
    const host = this.allowedHost(request.host);
    const exempt =
      (request.method === 'GET' || request.method === 'HEAD') &&
      request.route !== undefined &&
      HOST_EXEMPT_ROUTES.includes(request.route);
    if (!host && !exempt) {
      throw new CodeError(
        'HOST_NOT_ALLOWED',
        `Host ${JSON.stringify(request.host ?? '')} is not served here: use localhost, 127.0.0.1 or [::1], or add the name to allowed_hosts`,
        { host: request.host ?? null },
      );
    }
    if (request.origin !== undefined) {
      if (!this.originAllowed(request.origin, host)) {
        throw new CodeError(
          'ORIGIN_NOT_ALLOWED',
          `Origin ${JSON.stringify(request.origin)} may not call this server: only its own origin and allowed_origins may`,
          { origin: request.origin },
        );
      }
      return;
    }
    const site = request.secFetchSite?.trim().toLowerCase();
    if (site !== undefined && FOREIGN_FETCH_SITES.has(site)) {
      throw new CodeError(
        'ORIGIN_NOT_ALLOWED',
        `a ${site} browser request without an allowed Origin may not call this server`,
        { secFetchSite: site },
      );
    }
  }

  // Same origin: the Origin's host is the (allowed) Host the request came to, over http or https (a TLS proxy in front).
  private originAllowed(raw: string, host: HostValue | undefined): boolean {
    const origin = parseOriginValue(raw);
    if (!origin) return false;
    if (this.origins.has(origin.origin)) return true;
    return host !== undefined && originHostFor(origin.scheme, host) === origin.host;
  }
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  // Several values of a single-valued header are refused like a bad one (they cannot be compared).
  return Array.isArray(value) ? value.join(',') : value;
}

/** Check every request (WebSocket upgrades included, before they upgrade) with a BrowserGuard for the config. */
export function installBrowserGuard(app: FastifyInstance, config: BrowserGuardConfig): BrowserGuard {
  const guard = new BrowserGuard(config);
  // A callback hook, not an async one: no promise per request on the hot path.
  app.addHook('onRequest', (request, _reply, done) => {
    try {
      guard.check({
        method: request.method,
        route: request.routeOptions.url,
        host: header(request, 'host'),
        origin: header(request, 'origin'),
        secFetchSite: header(request, 'sec-fetch-site'),
      });
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  });
  return guard;
}

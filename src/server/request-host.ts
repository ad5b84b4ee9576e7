// Host and Origin values are parsed strictly before anything compares them: a value that is not a plain
// `name[:port]` (userinfo, paths, spaces, several hosts) is refused rather than guessed at.
const HOST_VALUE = /^(?:\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?)(?::[0-9]{1,5})?$/;
const ORIGIN_VALUE = /^(https?):\/\/((?:\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?)(?::[0-9]{1,5})?)$/;

/** A parsed `Host` header or allow-list entry: the normalised host name (IPv6 in brackets) and the port, if any. */
export interface HostValue {
  hostname: string;
  port: string | undefined;
}

/** A parsed `Origin` header or allow-list entry: scheme plus host. */
export interface OriginValue {
  scheme: 'http' | 'https';
  /** The origin's host as a browser's URL reports it: `name`, `name:port` (default ports dropped), `[v6]:port`. */
  host: string;
  /** The normalised origin, e.g. `http://127.0.0.1:8080`. */
  origin: string;
}

/** Parse `name`, `name:port`, `[v6]` or `[v6]:port`; undefined for anything else (e.g. `localhost:8080@evil`). */
export function parseHostValue(raw: string): HostValue | undefined {
  const text = raw.trim().toLowerCase();
  if (!HOST_VALUE.test(text)) return undefined;
  try {
    // WHATWG URL parsing normalises IPv6 and IPv4 spellings the way browsers do before they send a Host.
    const url = new URL(`http://${text}/`);
    const explicitPort = /:([0-9]{1,5})$/.exec(text.startsWith('[') ? text.slice(text.indexOf(']')) : text)?.[1];
    if (explicitPort !== undefined && Number(explicitPort) > 65535) return undefined;
    return { hostname: url.hostname, port: explicitPort === undefined ? undefined : String(Number(explicitPort)) };
  } catch {
    return undefined;
  }
}

/** Parse a serialised origin `http(s)://host[:port]`; undefined for `null`, paths, other schemes or junk. */
export function parseOriginValue(raw: string): OriginValue | undefined {
  const match = ORIGIN_VALUE.exec(raw.trim().toLowerCase());
  if (!match) return undefined;
  try {
    const url = new URL(`${match[1]}://${match[2]}/`);
    return { scheme: match[1] as 'http' | 'https', host: url.host, origin: url.origin };
  } catch {
    return undefined;
  }
}

/** The host a browser would put in an origin of `scheme` for a request whose Host header was `host` (default port dropped). */
export function originHostFor(scheme: 'http' | 'https', host: HostValue): string {
  const url = new URL(`${scheme}://${host.hostname}${host.port !== undefined ? `:${host.port}` : ''}/`);
  return url.host;
}

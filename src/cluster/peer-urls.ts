/**
 * The origins a node may forward to (`cluster.peer_urls`): exact origins, or with `*` in the host or port
 * standing for a run of characters other than `.`, `:` and `/`. An owner's advertised URL is used only when
 * its origin matches one of them, so an advertisement written to Redis by someone else cannot send clients'
 * credentials anywhere.
 */
export class PeerUrls {
  private readonly patterns: readonly RegExp[];

  constructor(entries: readonly string[]) {
    this.patterns = entries.map((entry) => {
      const origin = entry.replace(/\/$/, '').toLowerCase();
      const source = origin.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^.:/]+');
      return new RegExp(`^${source}$`);
    });
  }

  /** True when no peer is configured: this node forwards nowhere. */
  get empty(): boolean {
    return this.patterns.length === 0;
  }

  /** The origin of `url` when it is an http(s) URL whose origin matches a pattern (default ports made explicit), else undefined. */
  allowed(url: string | undefined): string | undefined {
    if (url === undefined || !URL.canParse(url)) return undefined;
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
    if (parsed.username !== '' || parsed.password !== '') return undefined;
    const port = parsed.port || (parsed.protocol === 'https:' ? '443' : '80');
    const explicit = `${parsed.protocol}//${parsed.hostname}:${port}`;
    return this.patterns.some((pattern) => pattern.test(parsed.origin) || pattern.test(explicit))
      ? parsed.origin
      : undefined;
  }
}

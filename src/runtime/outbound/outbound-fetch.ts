import { fetch as undiciFetch } from 'undici';
import { checkOutboundUrl, type OutboundResolver } from './check-outbound-url.js';
import { pinnedDispatcher } from './pinned-dispatcher.js';

/** Options of outboundFetch. */
export interface OutboundFetchOptions {
  /** May the URLs be private, loopback or link-local (host_direct, or config outbound.allow_private_networks). */
  readonly allowPrivate: boolean;
  /** Name resolution (tests inject one; default: the system resolver). */
  readonly resolve?: OutboundResolver;
}

/**
 * A fetch for URLs a tenant named (a session's MCP server over HTTP): every request's URL is checked
 * (checkOutboundUrl), the connection goes only to the checked address (no second DNS lookup), and a
 * redirect is a failure, never followed. Each request has its own pinned dispatcher, closed once its body
 * is consumed, so no pooled connection outlives a DNS change.
 */
export function outboundFetch(options: OutboundFetchOptions): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const checked = await checkOutboundUrl(url, {
      allowPrivate: options.allowPrivate,
      ...(options.resolve ? { resolve: options.resolve } : {}),
    });
    const dispatcher = pinnedDispatcher(checked);
    try {
      // The standard RequestInit and undici's differ only in type details; the runtime shapes are the same.
      const response = await undiciFetch(checked.url, {
        ...(init as Parameters<typeof undiciFetch>[1]),
        dispatcher,
        redirect: 'manual',
      });
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel().catch(() => undefined);
        throw new Error(
          `${url} answered a redirect (HTTP ${response.status}${response.headers.get('location') ? ` to ${response.headers.get('location')}` : ''}); redirects are not followed`,
        );
      }
      return response as unknown as Response;
    } finally {
      // Graceful: an open response body (an SSE stream) keeps its connection until it ends.
      void dispatcher.close().catch(() => undefined);
    }
  };
}

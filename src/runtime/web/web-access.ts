import type { Dispatcher } from 'undici';
import type { CodeConfig } from '../../config/code-config.js';
import type { CheckedOutboundUrl, OutboundResolver } from '../outbound/check-outbound-url.js';

/** The config's `web` block as the web tools read it. */
export type WebSettings = CodeConfig['web'];

/**
 * What the web tools (web_fetch, web_search) get as `ctx.web`: the operator's web settings and how a checked
 * address is reached. Production sessions use the system resolver and a pinned dispatcher per request;
 * `resolve` and `connect` exist so tests can play DNS and route a checked public address to a local server.
 */
export interface WebAccess {
  readonly settings: WebSettings;
  /** Name resolution for the address check (default: the system resolver). */
  readonly resolve?: OutboundResolver;
  /** The dispatcher one request to a checked URL goes through (default: pinnedDispatcher of that URL). */
  readonly connect?: (checked: CheckedOutboundUrl) => Dispatcher & { close(): Promise<void> };
}

import { randomUUID } from 'node:crypto';
import type { OutboundResolver } from '../../outbound/check-outbound-url.js';
import { HostBridgeError } from './host-bridge-error.js';
import { postWebhook, type WebhookHostEndpoint } from './webhook-client.js';
import type { HostRequestFrameType, WebSocketHostRegistry } from './websocket-host-registry.js';

/** A connected WebSocket client that registered itself as a host (see WebSocketHostRegistry). */
export interface WebSocketHostEndpoint {
  kind: 'websocket';
  connectionId: string;
}

/** Where a host question goes: a webhook URL or a connected WebSocket client. */
export type HostEndpoint = WebhookHostEndpoint | WebSocketHostEndpoint;

/** How one host question is asked. */
export interface AskHostOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** The frame a WebSocket host gets (default `hook_request`; slash commands use `command_request`). */
  frame?: HostRequestFrameType;
  /** Needed for WebSocket endpoints. */
  registry?: WebSocketHostRegistry;
  /** Request id generator for webhooks (default: random UUIDs). */
  newRequestId?: () => string;
  /** A fetch implementation for webhooks (a test seam; default: undici's request on a pinned dispatcher). */
  fetch?: typeof fetch;
  /** Name resolution for the webhook address check (default: the system resolver). */
  resolve?: OutboundResolver;
}

/**
 * Ask a host a question and wait for its answer (unvalidated JSON: callers parse it with their schema).
 * Webhooks get `{...payload, kind, request_id}` as the POST body; WebSocket hosts get a `hook_request`
 * frame `{type, request_id, kind, payload}`. A webhook URL is checked before every request (private
 * addresses refused unless the endpoint allows them) and a refusal is a failure like any other, so gating
 * hooks and budget hosts fail closed. Every failure rejects with HostBridgeError.
 */
export async function askHost(
  endpoint: HostEndpoint,
  kind: string,
  payload: Record<string, unknown>,
  options: AskHostOptions,
): Promise<unknown> {
  if (endpoint.kind === 'webhook') {
    const requestId = (options.newRequestId ?? randomUUID)();
    // kind and request_id come last so a payload field can never impersonate them.
    return postWebhook(
      endpoint,
      { ...payload, kind, request_id: requestId },
      {
        timeoutMs: options.timeoutMs,
        signal: options.signal,
        fetch: options.fetch,
        ...(options.resolve ? { resolve: options.resolve } : {}),
      },
    );
  }
  if (!options.registry)
    throw new HostBridgeError(
      'unknown_connection',
      `no WebSocket host registry to reach connection ${endpoint.connectionId}`,
    );
  return options.registry.request(
    endpoint.connectionId,
    kind,
    payload,
    options.timeoutMs,
    options.signal,
    options.frame,
  );
}

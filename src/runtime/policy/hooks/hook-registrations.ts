import type { z } from 'zod';
import { CodeError } from '../../../errors.js';
import { formatZodIssues, zodFieldIssues } from '../../../protocol/format-zod-issues.js';
import {
  ConfigHookRegistrationSchema,
  HookRegistrationSchema,
  type HookEvent,
  type HookInfo,
  type HookMatcher,
  type HookRegistrationInput,
} from '../../../protocol/hooks.js';
import type { HostEndpoint } from '../host-bridge/ask-host.js';
import type { WebSocketHostRegistry } from '../host-bridge/websocket-host-registry.js';

/** A registered hook with its endpoint resolved to a host the bridge can reach. */
export interface StoredHook {
  readonly id: string;
  readonly event: HookEvent;
  readonly matcher: HookMatcher | undefined;
  readonly priority: number;
  readonly timeoutMs: number;
  /** Observing events: told without waiting for the hooks before it (ignored for gating events). */
  readonly asyncExecution: boolean;
  /** Times a failed request is repeated before it counts as failed. */
  readonly maxRetries: number;
  readonly endpoint: HostEndpoint;
  readonly source: 'session' | 'config';
  readonly createdAtMs: number;
  /** Registration order, the tie-breaker between equal priorities. */
  readonly seq: number;
}

/** Who registers a hook: the caller's tenant and, for a registration arriving on a WebSocket, that socket's id. */
export interface HookOwner {
  tenantId: string;
  /** Used as the endpoint's connection id when a websocket registration omits it. */
  connectionId?: string;
  /**
   * The caller may name a webhook on a private, loopback or link-local address (it has host_direct, or config
   * outbound.allow_private_networks is on); remembered with the hook and checked again at every call.
   */
  allowPrivateNetworks?: boolean;
}

function issueError(
  code: 'VALIDATION_ERROR' | 'SESSION_CONFIGURATION_ERROR',
  path: string,
  message: string,
): CodeError {
  return new CodeError(code, `${path}: ${message}`, { issues: [{ path, message }] });
}

function validationOrThrow<T extends z.ZodType>(
  schema: T,
  value: unknown,
  code: 'VALIDATION_ERROR' | 'SESSION_CONFIGURATION_ERROR',
  prefix: string,
): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new CodeError(code, formatZodIssues(result.error, { where: prefix }), {
    issues: zodFieldIssues(result.error, prefix, 10),
  });
}

/**
 * Parse a session hook registration and resolve its endpoint (`newId` names it when it has no id). WebSocket endpoints must name an attached
 * connection of the owner's tenant (the `connection_id` of the socket's `host_registered` frame, or the owner's
 * own connection); otherwise the answer is the same VALIDATION_ERROR whether the id is unknown or belongs
 * to another tenant, so ids of other tenants cannot be probed. A webhook's URL may reach private addresses
 * only when the owner may (`allowPrivateNetworks`); an ownerless registration is an in-process one and trusted.
 * The URL's address is checked when it is called (the route checks it at registration too).
 */
export function resolveSessionHook(
  input: HookRegistrationInput,
  owner: HookOwner | undefined,
  registry: WebSocketHostRegistry,
  newId: () => string,
  seq: number,
  now: number,
): StoredHook {
  const reg = validationOrThrow(HookRegistrationSchema, input, 'VALIDATION_ERROR', '');
  let endpoint: HostEndpoint;
  if (reg.endpoint.type === 'webhook') {
    const allowPrivateNetworks = owner === undefined || owner.allowPrivateNetworks === true;
    endpoint = {
      kind: 'webhook',
      url: reg.endpoint.url,
      ...(reg.endpoint.headers ? { headers: reg.endpoint.headers } : {}),
      allowPrivateNetworks,
    };
  } else {
    const connectionId = reg.endpoint.connectionId ?? owner?.connectionId;
    if (connectionId === undefined) {
      throw issueError(
        'VALIDATION_ERROR',
        'endpoint.connectionId',
        'required for a websocket hook registered over REST: send {"type":"host_register"} on your events WebSocket and pass the connection_id of the "host_registered" frame it answers with',
      );
    }
    const binding = registry.bindingOf(connectionId);
    const sameTenant =
      owner === undefined ? registry.has(connectionId) : binding !== undefined && binding.tenantId === owner.tenantId;
    if (!sameTenant)
      throw issueError(
        'VALIDATION_ERROR',
        'endpoint.connectionId',
        'no open events WebSocket with this connection id for your tenant',
      );
    endpoint = { kind: 'websocket', connectionId };
  }
  // The id is drawn only for a valid registration, so refused ones do not consume ids.
  return {
    id: reg.id ?? newId(),
    event: reg.event,
    matcher: reg.matcher,
    priority: reg.priority,
    timeoutMs: reg.timeoutMs,
    asyncExecution: reg.asyncExecution,
    maxRetries: reg.maxRetries,
    endpoint,
    source: 'session',
    createdAtMs: now,
    seq,
  };
}

/**
 * Parse config-declared hooks (webhooks only; ids default to `config-<index>` and must be unique).
 * `mayCallPrivate(index)` says whether hook `index` may call private addresses: the operator's hooks may, hooks
 * from a session's options only when their creator had host_direct (or config outbound.allow_private_networks).
 */
export function resolveConfigHooks(
  inputs: readonly unknown[],
  now: number,
  mayCallPrivate: (index: number) => boolean = () => true,
): StoredHook[] {
  const seen = new Set<string>();
  return inputs.map((input, index) => {
    const reg = validationOrThrow(ConfigHookRegistrationSchema, input, 'SESSION_CONFIGURATION_ERROR', `hooks.${index}`);
    const id = reg.id ?? `config-${index}`;
    if (seen.has(id)) throw issueError('SESSION_CONFIGURATION_ERROR', `hooks.${index}.id`, `duplicate hook id "${id}"`);
    seen.add(id);
    const endpoint: HostEndpoint = {
      kind: 'webhook',
      url: reg.endpoint.url,
      ...(reg.endpoint.headers ? { headers: reg.endpoint.headers } : {}),
      allowPrivateNetworks: mayCallPrivate(index),
    };
    return {
      id,
      event: reg.event,
      matcher: reg.matcher,
      priority: reg.priority,
      timeoutMs: reg.timeoutMs,
      asyncExecution: reg.asyncExecution,
      maxRetries: reg.maxRetries,
      endpoint,
      source: 'config' as const,
      createdAtMs: now,
      seq: index,
    };
  });
}

/** The public view of a hook: header values stay secret, WebSocket endpoints say whether they are connected. */
export function hookInfo(hook: StoredHook, registry: WebSocketHostRegistry): HookInfo {
  const endpoint: HookInfo['endpoint'] =
    hook.endpoint.kind === 'webhook'
      ? { type: 'webhook', url: hook.endpoint.url, headerNames: Object.keys(hook.endpoint.headers ?? {}) }
      : {
          type: 'websocket',
          connectionId: hook.endpoint.connectionId,
          connected: registry.has(hook.endpoint.connectionId),
        };
  return {
    id: hook.id,
    event: hook.event,
    matcher: hook.matcher ?? null,
    priority: hook.priority,
    timeoutMs: hook.timeoutMs,
    asyncExecution: hook.asyncExecution,
    maxRetries: hook.maxRetries,
    source: hook.source,
    createdAtMs: hook.createdAtMs,
    endpoint,
  };
}

/** Hooks in the order they run: priority ascending, then registration order (config hooks first). */
export function runOrder(a: StoredHook, b: StoredHook): number {
  return a.priority - b.priority || a.seq - b.seq;
}

import type { RawData } from 'ws';
import type { CodeError } from '../errors.js';
import type { SubscriptionLimits } from '../runtime/events/event-subscription.js';
import type { Caller } from '../runtime/ports/caller.js';
import type { AgentSession } from '../runtime/session-kernel/agent-session.js';
import type { ClientFaultLog } from './client-fault-log.js';
import type { ServerContext } from './server-context.js';
import type { OpenedSubscription } from './session-subscription.js';
import type { ProxiedSocket } from './socket-proxy.js';
import type { SocketRegistry } from './socket-registry.js';

/** What an events socket needs: the runtime, the registry that closes sockets, the subscriber bounds and the client fault log. */
export interface EventsSocketDeps {
  readonly ctx: ServerContext;
  readonly sockets: SocketRegistry;
  readonly limits: SubscriptionLimits;
  readonly faults: ClientFaultLog;
}

/** What the upgrade's URL names: the session, the cursor to replay after, and (admins) the session's tenant. */
export interface EventsSocketAddress {
  readonly sessionId: string;
  readonly after: number | undefined;
  readonly tenantId: string | undefined;
}

/** A message an authenticated socket sent while attaching: handled once attached, or passed on as it came (`raw`) when proxied. */
export interface WaitingMessage {
  readonly handle: () => void;
  readonly raw: readonly [RawData, boolean] | undefined;
}

/**
 * Where an attached socket is served: the live session here (its host connection once it registers), the
 * session's shared stream while another node owns it (session-bound messages are refused naming the owner),
 * or the owner node itself, to which the socket is spliced whole.
 */
export type EventsSocketAttachment =
  | {
      readonly via: 'session';
      readonly opened: OpenedSubscription;
      readonly session: AgentSession;
      hostConnectionId: string | undefined;
    }
  | { readonly via: 'stream'; readonly opened: OpenedSubscription; readonly owner: CodeError }
  | { readonly via: 'proxy'; readonly proxy: ProxiedSocket };

/**
 * The states of one events socket. unauthenticated -> attaching (credentials accepted) -> attached (the
 * subscription started, or the socket proxied) -> closed; any state -> closed (a close of ours or the
 * client's). Nothing leaves `closed`.
 */
export type EventsSocketState =
  | { readonly kind: 'unauthenticated'; refused: number; readonly timer: NodeJS.Timeout | undefined }
  | { readonly kind: 'attaching'; readonly caller: Caller; readonly waiting: WaitingMessage[] }
  | { readonly kind: 'attached'; readonly caller: Caller; readonly to: EventsSocketAttachment }
  | { readonly kind: 'closed' };

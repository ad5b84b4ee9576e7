import { CodeError } from '../errors.js';
import { WS_CLOSE } from '../protocol/ws-messages.js';
import { hasScope, type Caller } from '../runtime/ports/caller.js';
import {
  EventSubscription,
  type SubscriptionLimits,
  type SubscriptionTransport,
} from '../runtime/events/event-subscription.js';
import type { AgentSession } from '../runtime/session-kernel/agent-session.js';
import type { ServerContext } from './server-context.js';
import { sessionKey } from '../stores/session-key.js';
import { followSessionStream } from '../runtime/events/session-stream-follow.js';

/** A subscriber still catching up when its session closes gets this long to read the rest, then 4010. */
export const SESSION_CLOSED_DRAIN_MS = 10_000;

/**
 * A session's event subscription, attached but not started: the caller keeps `stop` first, then calls
 * `start`. Either the live session is this node's (`session`), or the subscription follows another node's
 * stream (`followedOwner`, the SESSION_OWNED_ELSEWHERE error naming the owner); never both.
 */
export type OpenedSubscription = OpenedSubscriptionBase &
  (
    | { readonly session: AgentSession; readonly followedOwner: undefined }
    | { readonly session: undefined; readonly followedOwner: CodeError }
  );

/** What every opened subscription has, wherever the session lives. */
interface OpenedSubscriptionBase {
  /** The subscription (acknowledgements go to `ack`, answers to the client to `sendControl`). */
  readonly subscription: EventSubscription;
  /** Start writing: replay after the cursor (or live-only), then follow. */
  start(): void;
  /** Stop reading and writing (the connection closed). Idempotent. */
  stop(): void;
}

/**
 * Attach a subscriber to a session's events, wherever the session lives: its event log when this node has
 * it (hydrated if stored), or, when another live node owns it, the session's shared (Redis) stream. Both
 * are an EventSubscription, so every transport (WebSocket, SSE) gets the same replay from `after`, the
 * same `replay_gap` frames, the same bounded window and the same close codes (WS_CLOSE). Throws a
 * CodeError when there is no such session for the caller (SESSION_NOT_FOUND and the like) or it is closed
 * (SESSION_CLOSED); `who` is the caller as it addresses the session (see addressedCaller).
 */
export async function openSessionSubscription(
  ctx: ServerContext,
  who: Caller,
  sessionId: string,
  after: number | undefined,
  transport: SubscriptionTransport,
  limits: SubscriptionLimits,
): Promise<OpenedSubscription> {
  const key = sessionKey(who.tenantId, sessionId);
  try {
    await ctx.agent.ensureLocal(sessionId, who, false);
  } catch (error) {
    // Another live node owns the session: follow its events through the shared stream instead.
    const stream = ctx.ownership.stream;
    if (!(error instanceof CodeError) || error.code !== 'SESSION_OWNED_ELSEWHERE' || !stream) throw error;
    const snapshot = await ctx.store.load(key).catch(() => undefined);
    // An unsaved session (no autoSave) has no snapshot: its home record, under the caller's tenant's key, says it exists.
    const unsaved =
      snapshot === undefined && (await ctx.ownership.locate(key).catch(() => undefined))?.unsaved === true;
    if (!unsaved && (!snapshot || (snapshot.session.ownerTenantId !== who.tenantId && !hasScope(who, 'admin')))) {
      throw new CodeError('SESSION_NOT_FOUND', `session ${sessionId} not found`);
    }
    const follow = await followSessionStream(stream, key, after, transport, {
      limits,
      closedDrainMs: SESSION_CLOSED_DRAIN_MS,
    });
    return {
      subscription: follow.subscription,
      session: undefined,
      followedOwner: error,
      start: () => follow.start(),
      stop: () => follow.stop(),
    };
  }
  const session = ctx.agent.getSession(sessionId, who);
  session.lifecycle.assertOpen();
  const subscription = new EventSubscription(session.events, transport, limits, {
    slowConsumer: WS_CLOSE.slowConsumer,
    sessionClosed: WS_CLOSE.sessionClosed,
  });
  let drainTimer: NodeJS.Timeout | undefined;
  let unwatch: (() => void) | undefined;
  const stop = () => {
    clearTimeout(drainTimer);
    unwatch?.();
    unwatch = undefined;
    subscription.stop();
  };
  const start = () => {
    // Closed between the lookup and now: nothing will follow.
    if (session.lifecycle.isClosed) {
      stop();
      transport.close(WS_CLOSE.sessionClosed, 'session closed');
      return;
    }
    subscription.start(after);
    // A live subscriber gets session_closed and 4010 from the subscription itself; one still catching
    // up reads on, but must not keep the closed session's log alive for ever.
    unwatch = session.events.listen((event) => {
      if (event.type !== 'session_closed' || subscription.isLive) return;
      unwatch?.();
      unwatch = undefined;
      drainTimer = setTimeout(() => transport.close(WS_CLOSE.sessionClosed, 'session closed'), SESSION_CLOSED_DRAIN_MS);
      drainTimer.unref();
    });
  };
  return { subscription, session, followedOwner: undefined, start, stop };
}

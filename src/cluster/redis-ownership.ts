import type { RedisClient } from '../stores/redis-client.js';
import type { EventEnvelope } from '../protocol/event-envelope.js';
import type { OwnershipResult, SessionOwnership, SessionWhereabouts } from '../runtime/ports/session-ownership.js';
import { redisFailure } from '../stores/redis-failure.js';
import { redisSessionKey } from '../stores/redis-keys.js';
import type { SessionKey } from '../stores/session-key.js';
import type { NodeRegistry } from './node-identity.js';
import type { RedisEventStream } from './redis-event-stream.js';
import type { SessionLeases } from './session-lease.js';

/**
 * How long the home record of a session created without autoSave outlives its creation: other nodes route
 * to its node while that node lives, and answer NODE_LOST once it is gone, for this long (7 days).
 */
export const HOME_RECORD_TTL_MS = 7 * 24 * 3600 * 1000;

/** What the Redis-backed ownership is built from (see createRuntimeContext). */
export interface RedisOwnershipOptions {
  redis: RedisClient;
  keyPrefix: string;
  nodeId: string;
  leases: SessionLeases;
  events: RedisEventStream;
  /** Told about failed publishes and lease losses (logging). */
  onError?(message: string, error: unknown): void;
}

/**
 * Session ownership over Redis, keyed by SessionKey (tenant and session id): a lease per live session (owner node + epoch, renewed inside its TTL),
 * the owner's address from the node registry for routing, a per-session event stream, and an
 * `{<tenant>/<id>}:active-run` key so any node can answer SESSION_BUSY for a busy session.
 */
export class RedisOwnership implements SessionOwnership {
  readonly clustered = true;
  readonly nodeId: string;
  private readonly lostListeners: ((sessionId: SessionKey) => void)[] = [];
  private registry: NodeRegistry | undefined;

  constructor(private readonly options: RedisOwnershipOptions) {
    this.nodeId = options.nodeId;
  }

  /** The per-session Redis stream subscribers on any node follow. */
  get stream(): RedisEventStream {
    return this.options.events;
  }

  /** Start advertising this node (once it listens, so its URL is known). */
  async advertise(registry: NodeRegistry): Promise<void> {
    this.registry = registry;
    await registry.start();
  }

  /** Called by the lease renewal loop when a lease was lost (wired in the context). */
  lost(sessionId: SessionKey): void {
    for (const listener of this.lostListeners) listener(sessionId);
  }

  /**
   * A write was refused by the fence: renew the lease (which takes it again when nobody else took over,
   * e.g. after Redis lost its data). True when we still own the session; otherwise it is reported lost.
   */
  async fenced(sessionId: SessionKey): Promise<boolean> {
    const held = this.options.leases.held().find((h) => h.sessionId === sessionId);
    const still = held ? await this.options.leases.renew(sessionId, held.epoch).catch(() => false) : false;
    if (!still) this.lost(sessionId);
    return still;
  }

  async acquire(sessionId: SessionKey): Promise<OwnershipResult> {
    const result = await this.options.leases.acquire(sessionId);
    if (result.ok) return { ok: true };
    if (!result.alive) {
      // The owner's node record is gone but its lease has not expired yet: the caller may retry shortly.
      return { ok: false, ownerNodeId: result.owner, ownerUrl: undefined };
    }
    const info = await this.registry?.get(result.owner);
    return { ok: false, ownerNodeId: result.owner, ownerUrl: info?.url };
  }

  async locate(sessionId: SessionKey): Promise<SessionWhereabouts | undefined> {
    let lease: string | null;
    let home: string | null;
    try {
      // Same hash tag: one slot, one round trip, also on a Redis Cluster.
      [lease, home] = await this.options.redis.mget(this.options.leases.leaseKey(sessionId), this.homeKey(sessionId));
    } catch (error) {
      throw redisFailure(`failed to locate session ${sessionId}`, { sessionId }, error);
    }
    const nodeId = lease ?? home;
    if (nodeId === null) return undefined;
    if (nodeId === this.nodeId)
      return { nodeId, url: undefined, alive: true, leased: lease !== null, unsaved: home !== null };
    const info = await this.registry?.get(nodeId);
    return { nodeId, url: info?.url, alive: info !== undefined, leased: lease !== null, unsaved: home !== null };
  }

  async recordHome(sessionId: SessionKey): Promise<void> {
    try {
      await this.options.redis.set(this.homeKey(sessionId), this.nodeId, 'PX', HOME_RECORD_TTL_MS);
    } catch (error) {
      throw redisFailure(`failed to record the home node of session ${sessionId}`, { sessionId }, error);
    }
  }

  async release(sessionId: SessionKey): Promise<void> {
    const held = this.options.leases.held().find((h) => h.sessionId === sessionId);
    if (held)
      await this.options.leases
        .release(sessionId, held.epoch)
        .catch((error: unknown) => this.options.onError?.(`releasing the lease of ${sessionId}`, error));
  }

  async lastSequence(sessionId: SessionKey): Promise<number> {
    return (await this.options.events.lastSequence(sessionId)) ?? 0;
  }

  publish(sessionId: SessionKey, event: EventEnvelope): void {
    // Appends go out on one connection in call order; a fenced append means another node owns the session now.
    this.options.events
      .append(sessionId, event, this.options.leases.storeFence(sessionId))
      .catch(async (error: unknown) => {
        if (
          (error as { details?: { reason?: string } }).details?.reason === 'fenced' &&
          (await this.fenced(sessionId))
        ) {
          // The lease was taken again (Redis lost its data, nobody else took over): publish under the new epoch.
          await this.options.events
            .append(sessionId, event, this.options.leases.storeFence(sessionId))
            .catch((again: unknown) =>
              this.options.onError?.(`publishing event ${event.metadata.session_sequence} of ${sessionId}`, again),
            );
          return;
        }
        this.options.onError?.(`publishing event ${event.metadata.session_sequence} of ${sessionId}`, error);
      });
  }

  setActiveRun(sessionId: SessionKey, runId: string | undefined): void {
    const key = this.activeKey(sessionId);
    const op = runId === undefined ? this.options.redis.del(key) : this.options.redis.set(key, runId);
    op.catch((error: unknown) => this.options.onError?.(`marking the active run of ${sessionId}`, error));
  }

  async activeRun(sessionId: SessionKey): Promise<string | undefined> {
    return (await this.options.redis.get(this.activeKey(sessionId))) ?? undefined;
  }

  onLost(listener: (sessionId: SessionKey) => void): void {
    this.lostListeners.push(listener);
  }

  /** Release leases and stop heartbeats, the event stream and the node advertisement; each step runs even when Redis fails. */
  async close(): Promise<void> {
    await this.options.leases.releaseAll().catch(() => []);
    const report = (what: string) => (error: unknown) => this.options.onError?.(what, error);
    await this.options.leases.stop().catch(report('stopping lease renewal'));
    await this.options.events.close().catch(report('closing the event stream'));
    await this.registry?.stop().catch(report('removing the node advertisement'));
  }

  private homeKey(sessionId: SessionKey): string {
    return redisSessionKey(this.options.keyPrefix, sessionId, 'home');
  }

  private activeKey(sessionId: SessionKey): string {
    return redisSessionKey(this.options.keyPrefix, sessionId, 'active-run');
  }
}

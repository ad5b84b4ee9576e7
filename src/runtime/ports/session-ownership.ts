import type { EventEnvelope } from '../../protocol/event-envelope.js';
import type { SessionKey } from '../../stores/session-key.js';

/** A session's shared event stream, for subscribers on nodes that do not own the session. */
export interface SharedEventStream {
  /** Deliver, in order, every event with session_sequence > after, then live ones, until the signal aborts. */
  follow(
    session: SessionKey,
    after: number,
    onEvent: (event: EventEnvelope) => void,
    signal: AbortSignal,
  ): Promise<void>;
  /** The oldest retained session_sequence (undefined when the stream is empty). */
  firstAvailable(session: SessionKey): Promise<number | undefined>;
  /** The newest published session_sequence (undefined when the stream is empty). */
  lastSequence(session: SessionKey): Promise<number | undefined>;
}

/** The answer to "may this node serve the session?". */
export type OwnershipResult = { ok: true } | { ok: false; ownerNodeId: string; ownerUrl: string | undefined };

/** Where another node says a session lives, read without taking anything (see SessionOwnership.locate). */
export interface SessionWhereabouts {
  /** The node holding its lease, else the node an unsaved session was created on. */
  readonly nodeId: string;
  /** That node's advertised URL while it heartbeats. */
  readonly url: string | undefined;
  /** True while that node heartbeats. */
  readonly alive: boolean;
  /** True when a live lease names the node (false: only the unsaved session's home record does). */
  readonly leased: boolean;
  /** True when the session was created without autoSave on that node (a home record exists). */
  readonly unsaved: boolean;
}

/**
 * Who owns a live session, addressed by its SessionKey (tenant and id: session ids are per tenant). On one node (no Redis) every session is ours; in a cluster a Redis lease with a
 * monotonically increasing epoch decides, and run events are also published to a per-session stream so a
 * subscriber on any node can follow them.
 */
export interface SessionOwnership {
  readonly clustered: boolean;
  readonly nodeId: string;
  /** Take or keep the session's lease; when another live node holds it, say which. */
  acquire(session: SessionKey): Promise<OwnershipResult>;
  /**
   * Where the session lives according to the cluster: the node holding its lease, or the node an unsaved
   * session was created on (its home record); undefined when neither exists (one node: always).
   */
  locate(session: SessionKey): Promise<SessionWhereabouts | undefined>;
  /** Record this node as the home of a session created without autoSave, so other nodes can route to it (and answer NODE_LOST once it is gone). */
  recordHome(session: SessionKey): Promise<void>;
  /** Give the lease up (passivation, close, shutdown). */
  release(session: SessionKey): Promise<void>;
  /** The highest session_sequence already published for the session (0 when none), to continue numbering after a takeover. */
  lastSequence(session: SessionKey): Promise<number>;
  /** Publish one stamped event to the shared stream, in order (fire and forget; failures are reported). */
  publish(session: SessionKey, event: EventEnvelope): void;
  /** Record (runId) or clear (undefined) the session's active run, so other nodes answer SESSION_BUSY. */
  setActiveRun(session: SessionKey, runId: string | undefined): void;
  /** The run another node marked active for the session, if any. */
  activeRun(session: SessionKey): Promise<string | undefined>;
  /** A write was refused by the fence: keep the session if the lease can be renewed or safely retaken (true), else give it up. */
  fenced(session: SessionKey): Promise<boolean>;
  /** Called when this node loses a lease it held (another node took the session over). */
  onLost(listener: (session: SessionKey) => void): void;
  /** The shared event stream (clusters only). */
  readonly stream?: SharedEventStream;
  /** Release every lease and stop background work. */
  close(): Promise<void>;
}

/** Single-node ownership: every session is ours; nothing is published. */
export function createLocalOwnership(nodeId: string): SessionOwnership {
  return {
    clustered: false,
    nodeId,
    acquire: async () => ({ ok: true }),
    locate: async () => undefined,
    recordHome: async () => undefined,
    release: async () => undefined,
    lastSequence: async () => 0,
    publish: () => undefined,
    setActiveRun: () => undefined,
    activeRun: async () => undefined,
    fenced: async () => true,
    onLost: () => undefined,
    close: async () => undefined,
  };
}

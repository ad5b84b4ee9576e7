import type { WebSocket } from 'ws';
import type { EventEnvelope } from '../protocol/event-envelope.js';
import { WS_CLOSE } from '../protocol/ws-messages.js';
import type { SharedEventStream } from '../runtime/session-ownership.js';

/** Unsent bytes a stream follower may hold before it is closed as a slow consumer. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

function control(type: string, payload: Record<string, unknown>): string {
  return JSON.stringify({ version: 1, type, payload, metadata: {} });
}

/**
 * Subscribe a WebSocket to a session another node owns, through the session's Redis stream: a
 * `replay_gap` frame when the cursor is older than the stream keeps, then every event after the cursor
 * and live ones, in session_sequence order without gaps or duplicates, across ownership changes (each
 * owner continues the numbering). A trimmed hole met while following is reported as a `replay_gap` too.
 * A reader that lets more than 8 MiB pile up is closed with 4008. Returns the stop function.
 */
export async function followSessionStream(stream: SharedEventStream, sessionId: string, after: number | undefined, socket: WebSocket, close: (code: number, reason: string) => void): Promise<() => void> {
  const controller = new AbortController();
  let cursor = after ?? (await stream.lastSequence(sessionId)) ?? 0;
  if (after !== undefined) {
    const first = await stream.firstAvailable(sessionId);
    if (first !== undefined && first > after + 1) socket.send(control('replay_gap', { requested_after: after, first_available: first }));
  }
  const onEvent = (event: EventEnvelope) => {
    if (controller.signal.aborted) return;
    const sequence = event.metadata.session_sequence;
    if (sequence > cursor + 1 && cursor > 0) socket.send(control('replay_gap', { requested_after: cursor, first_available: sequence }));
    cursor = sequence;
    if (socket.bufferedAmount > MAX_BUFFERED_BYTES) {
      controller.abort();
      close(WS_CLOSE.slowConsumer, `subscriber fell behind by more than ${MAX_BUFFERED_BYTES} bytes; resume from your last session_sequence`);
      return;
    }
    socket.send(JSON.stringify(event));
    // Passivation and shutdown hand the session to another node: the stream goes on. Only a real close ends it.
    if (event.type === 'session_closed' && event.payload.reason === 'closed') {
      controller.abort();
      close(WS_CLOSE.sessionClosed, 'session closed');
    }
  };
  stream.follow(sessionId, cursor, onEvent, controller.signal).catch(() => {
    if (!controller.signal.aborted) close(WS_CLOSE.goingAway, 'event stream unavailable; reconnect with your last session_sequence');
  });
  return () => controller.abort();
}

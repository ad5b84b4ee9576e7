import type { SessionEventObserver } from './session-emitter.js';

/** The server's observer and the parent's, for a child session: both see each of its events. */
export function childObserver(
  server: SessionEventObserver | undefined,
  parent: SessionEventObserver,
): SessionEventObserver {
  return (type, payload) => {
    server?.(type, payload);
    parent(type, payload);
  };
}

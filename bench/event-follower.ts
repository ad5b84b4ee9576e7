import WebSocket from 'ws';

/** One event frame as a follower keeps it: type, run id, session_sequence and when it arrived. */
export interface FollowedEvent {
  type: string;
  runId: string | undefined;
  sessionSequence: number;
  receivedAt: number;
  payload: Record<string, unknown>;
}

/** A WebSocket subscriber of GET /v1/sessions/:id/events that records every event frame. */
export interface EventFollower {
  readonly events: FollowedEvent[];
  /** Control frames (replay_gap, error, ...), by type. */
  readonly controls: string[];
  /** Close code once the socket closed, else undefined. */
  closeCode(): number | undefined;
  /** Resolves with the first event (already received or later) the predicate accepts; rejects after timeoutMs. */
  waitFor(predicate: (event: FollowedEvent) => boolean, timeoutMs: number): Promise<FollowedEvent>;
  close(): Promise<void>;
}

/** Opens the events WebSocket of a session (after the given cursor) and resolves once it is open. */
export async function followEvents(
  baseUrl: string,
  sessionId: string,
  options: { after?: number; token?: string } = {},
): Promise<EventFollower> {
  const query = options.after === undefined ? '' : `?after=${options.after}`;
  const headers = options.token ? { authorization: `Bearer ${options.token}` } : {};
  const socket = new WebSocket(
    `${baseUrl.replace(/^http/, 'ws')}/v1/sessions/${encodeURIComponent(sessionId)}/events${query}`,
    { headers },
  );
  const events: FollowedEvent[] = [];
  const controls: string[] = [];
  const waiters = new Set<{ predicate: (event: FollowedEvent) => boolean; resolve: (event: FollowedEvent) => void }>();
  let code: number | undefined;
  socket.on('message', (data: WebSocket.RawData) => {
    const frame = JSON.parse(data.toString()) as {
      type: string;
      payload?: Record<string, unknown>;
      metadata?: { session_sequence?: number; run_id?: string };
    };
    const sequence = frame.metadata?.session_sequence;
    if (typeof sequence !== 'number') {
      controls.push(frame.type);
      return;
    }
    const event: FollowedEvent = {
      type: frame.type,
      runId: frame.metadata?.run_id,
      sessionSequence: sequence,
      receivedAt: performance.now(),
      payload: frame.payload ?? {},
    };
    events.push(event);
    for (const waiter of [...waiters]) {
      if (waiter.predicate(event)) {
        waiters.delete(waiter);
        waiter.resolve(event);
      }
    }
  });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) =>
    socket.on('close', (closeCode) => {
      code = closeCode;
      resolve();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('close', (closeCode: number) =>
      reject(new Error(`events WebSocket closed before opening (${closeCode})`)),
    );
    socket.once('unexpected-response', (_request, response) =>
      reject(new Error(`events WebSocket refused: HTTP ${response.statusCode ?? 0}`)),
    );
  });
  return {
    events,
    controls,
    closeCode: () => code,
    waitFor(predicate, timeoutMs) {
      const found = events.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = { predicate, resolve: (event: FollowedEvent) => (clearTimeout(timer), resolve(event)) };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(
            new Error(
              `no matching event within ${timeoutMs} ms (got ${events
                .map((e) => e.type)
                .slice(-12)
                .join(', ')})`,
            ),
          );
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    async close() {
      if (code === undefined) {
        socket.close();
        const timer = setTimeout(() => socket.terminate(), 2000);
        await closed;
        clearTimeout(timer);
      }
    },
  };
}

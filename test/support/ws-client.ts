import WebSocket from 'ws';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';

/** A test WebSocket subscriber that records frames and lets a test wait for them. */
export interface EventSubscriber {
  socket: WebSocket;
  frames: EventEnvelope[];
  closed: Promise<{ code: number; reason: string }>;
  /** Resolve when a frame matching the predicate has arrived (checks frames already received too). */
  waitFor(predicate: (e: EventEnvelope) => boolean, timeoutMs?: number): Promise<EventEnvelope>;
  send(message: unknown): void;
  close(): void;
}

/** Open GET /v1/sessions/:id/events as a WebSocket. */
export async function subscribe(baseUrl: string, sessionId: string, options: { after?: number; token?: string; headers?: Record<string, string>; waitOpen?: boolean } = {}): Promise<EventSubscriber> {
  const query = options.after !== undefined ? `?after=${options.after}` : '';
  const headers = { ...(options.headers ?? {}), ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) };
  const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/v1/sessions/${sessionId}/events${query}`, { headers });
  const frames: EventEnvelope[] = [];
  const waiters: { predicate: (e: EventEnvelope) => boolean; resolve: (e: EventEnvelope) => void }[] = [];
  socket.on('message', (data) => {
    const event = JSON.parse(data.toString()) as EventEnvelope;
    frames.push(event);
    for (const w of [...waiters]) {
      if (w.predicate(event)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(event);
      }
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  if (options.waitOpen !== false) {
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
      socket.once('close', () => resolve());
    });
  }
  return {
    socket,
    frames,
    closed,
    waitFor(predicate, timeoutMs = 10_000) {
      const found = frames.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out waiting for a frame; got ${frames.map((f) => f.type).join(', ')}`)), timeoutMs);
        waiters.push({ predicate, resolve: (e) => (clearTimeout(timer), resolve(e)) });
      });
    },
    send(message) {
      socket.send(JSON.stringify(message));
    },
    close() {
      socket.close();
    },
  };
}

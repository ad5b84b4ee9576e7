import type { EventEnvelope } from '../../src/protocol/event-envelope.js';

/** One parsed SSE frame (or comment). */
export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/** Parse complete SSE frames from text; returns the frames and the unparsed rest. */
export function parseSse(text: string): { frames: SseFrame[]; rest: string } {
  const frames: SseFrame[] = [];
  let rest = text;
  for (let end = rest.indexOf('\n\n'); end >= 0; end = rest.indexOf('\n\n')) {
    const block = rest.slice(0, end);
    rest = rest.slice(end + 2);
    const frame: SseFrame = {};
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) frame.comment = line.slice(1).trim();
      else {
        const colon = line.indexOf(':');
        const field = line.slice(0, colon);
        const value = line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id' || field === 'event' || field === 'data') frame[field] = value;
      }
    }
    frames.push(frame);
  }
  return { frames, rest };
}

/** A raw SSE reader over fetch: collects frames, parsed envelopes and comments. */
export interface SseReader {
  status: number;
  headers: Headers;
  frames: SseFrame[];
  /** Envelopes of frames with data, in order (events and control frames). */
  envelopes: EventEnvelope[];
  /** Event envelopes (with a session_sequence). */
  events(): EventEnvelope[];
  comments(): string[];
  /** The id of the last frame that had one. */
  lastId(): string | undefined;
  waitFor(predicate: (e: EventEnvelope) => boolean, timeoutMs?: number): Promise<EventEnvelope>;
  waitForComment(predicate: (c: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Resolves when the server ends the response. */
  ended: Promise<void>;
  abort(): void;
  /** The error body when the answer was not a stream. */
  body?: unknown;
}

/** Open `GET url` as an SSE stream with fetch. */
export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseReader> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  const frames: SseFrame[] = [];
  const envelopes: EventEnvelope[] = [];
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  let done = false;
  const reader: SseReader = {
    status: response.status,
    headers: response.headers,
    frames,
    envelopes,
    events: () => envelopes.filter((e) => typeof e.metadata.session_sequence === 'number'),
    comments: () => frames.flatMap((f) => (f.comment !== undefined ? [f.comment] : [])),
    lastId: () => frames.filter((f) => f.id !== undefined).at(-1)?.id,
    waitFor: (predicate, timeoutMs = 15_000) => waitUntil(() => envelopes.find(predicate), timeoutMs, 'event'),
    waitForComment: (predicate, timeoutMs = 15_000) =>
      waitUntil(() => reader.comments().find(predicate), timeoutMs, 'comment'),
    ended: Promise.resolve(),
    abort: () => controller.abort(),
  };
  function waitUntil<T>(find: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const check = () => {
        const found = find();
        if (found !== undefined) {
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        } else if (done) {
          waiters.delete(check);
          clearTimeout(timer);
          reject(new Error(`stream ended before the ${what} arrived`));
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out waiting for an ${what}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  }
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    reader.body = await response.json().catch(() => undefined);
    return reader;
  }
  const body = response.body;
  if (!body) throw new Error('no body');
  reader.ended = (async () => {
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for await (const chunk of body) {
        buffered += decoder.decode(chunk as Uint8Array, { stream: true });
        const parsed = parseSse(buffered);
        buffered = parsed.rest;
        for (const frame of parsed.frames) {
          frames.push(frame);
          if (frame.data !== undefined) envelopes.push(JSON.parse(frame.data) as EventEnvelope);
        }
        notify();
      }
    } catch {
      // aborted or cut
    } finally {
      done = true;
      notify();
    }
  })();
  return reader;
}

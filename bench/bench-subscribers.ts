import { get, type IncomingMessage } from 'node:http';
import WebSocket from 'ws';

/** How a bench subscriber reads the events route: the WebSocket or SSE (Accept: text/event-stream). */
export type SubscriberTransport = 'ws' | 'sse';

/** One open subscriber: `terminate` drops its connection. */
export interface BenchSubscriber {
  terminate(): void;
}

/** What a subscriber reports: every frame's envelope JSON, and its end (the close code, as a string). */
export interface SubscriberHandlers {
  onFrame(data: Buffer): void;
  onClose(code: string): void;
}

const FRAME_END = Buffer.from('\n\n');
const DATA_PREFIX = Buffer.from('data: ');
const CLOSE_COMMENT = /^: close (\d+)/;

/** Open a subscriber of `GET <baseUrl>/v1/sessions/<id>/events` (live-only); resolves once it is open. */
export function openSubscriber(
  transport: SubscriberTransport,
  baseUrl: string,
  sessionId: string,
  handlers: SubscriberHandlers,
): Promise<BenchSubscriber> {
  return transport === 'ws' ? openWs(baseUrl, sessionId, handlers) : openSse(baseUrl, sessionId, handlers);
}

function openWs(baseUrl: string, sessionId: string, handlers: SubscriberHandlers): Promise<BenchSubscriber> {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/v1/sessions/${sessionId}/events`, {
    perMessageDeflate: false,
  });
  socket.on('message', (data: WebSocket.RawData) => {
    handlers.onFrame(Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data));
  });
  socket.on('close', (code) => handlers.onClose(String(code)));
  return new Promise<BenchSubscriber>((resolve, reject) => {
    socket.once('open', () => resolve({ terminate: () => socket.terminate() }));
    socket.once('error', reject);
  });
}

/**
 * An SSE reader on its own connection: frames are split at blank lines; a frame's `data:` line is the
 * envelope; a `: close <code>` comment names why the server ended the stream ("end" when none did).
 */
function openSse(baseUrl: string, sessionId: string, handlers: SubscriberHandlers): Promise<BenchSubscriber> {
  const url = new URL(`${baseUrl}/v1/sessions/${sessionId}/events`);
  return new Promise<BenchSubscriber>((resolve, reject) => {
    const request = get(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        agent: false,
        headers: { accept: 'text/event-stream' },
      },
      (response: IncomingMessage) => {
        if (response.statusCode !== 200) {
          reject(new Error(`SSE subscriber refused: HTTP ${response.statusCode ?? 0}`));
          response.resume();
          return;
        }
        let pending: Buffer = Buffer.alloc(0);
        let closeCode = 'end';
        response.on('data', (chunk: Buffer) => {
          let buf = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
          for (let end = buf.indexOf(FRAME_END); end >= 0; end = buf.indexOf(FRAME_END)) {
            const block = buf.subarray(0, end);
            buf = buf.subarray(end + 2);
            if (block[0] === 0x3a) {
              const close = CLOSE_COMMENT.exec(block.toString('latin1'));
              if (close) closeCode = close[1] as string;
              continue;
            }
            const at = block.indexOf(DATA_PREFIX);
            if (at >= 0) handlers.onFrame(block.subarray(at + DATA_PREFIX.length));
          }
          pending = buf.length > 0 ? Buffer.from(buf) : Buffer.alloc(0);
        });
        response.on('close', () => handlers.onClose(closeCode));
        resolve({ terminate: () => request.destroy() });
      },
    );
    request.on('error', reject);
  });
}

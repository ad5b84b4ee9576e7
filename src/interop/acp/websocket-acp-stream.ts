import type { AnyMessage, Stream } from '@agentclientprotocol/sdk';
import type { RawData, WebSocket } from 'ws';

/** Bounds of one ACP WebSocket. */
export interface AcpStreamLimits {
  /** Unsent bytes the socket may hold before the peer counts as too slow (closed with 4008). */
  readonly maxBufferedBytes: number;
}

/**
 * The SDK's message Stream over a WebSocket: each text frame is one JSON-RPC message. A frame that is not a
 * JSON object is answered with a JSON-RPC parse error (-32700, id null) and not passed on; a peer that leaves
 * more than maxBufferedBytes unread is closed with 4008; the readable side ends when the socket closes.
 */
export function websocketAcpStream(socket: WebSocket, limits: AcpStreamLimits, onSlow: () => void): Stream {
  let onMessage: ((data: RawData) => void) | undefined;
  let onClose: (() => void) | undefined;
  const readable = new ReadableStream<AnyMessage>({
    start(controller) {
      onMessage = (data) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(data.toString());
        } catch {
          parsed = undefined;
        }
        if (parsed === null || typeof parsed !== 'object') {
          send({
            jsonrpc: '2.0',
            id: null,
            error: { code: -32700, message: 'Parse error: every frame must be one JSON-RPC message (a JSON object)' },
          });
          return;
        }
        controller.enqueue(parsed as AnyMessage);
      };
      onClose = () => {
        try {
          controller.close();
        } catch {
          // Already closed or cancelled.
        }
      };
      socket.on('message', onMessage);
      socket.on('close', onClose);
    },
    cancel() {
      if (onMessage) socket.off('message', onMessage);
      if (onClose) socket.off('close', onClose);
    },
  });
  const send = (message: unknown) => {
    if (socket.readyState !== socket.OPEN) return;
    if (socket.bufferedAmount > limits.maxBufferedBytes) {
      onSlow();
      return;
    }
    socket.send(JSON.stringify(message));
  };
  const writable = new WritableStream<AnyMessage>({
    write(message) {
      send(message);
    },
  });
  return { readable, writable };
}

import { PassThrough } from 'node:stream';
import type { Event as AguiEvent } from '@ag-ui/core';
import { EventEncoder } from '@ag-ui/encoder';
import type { FastifyReply } from 'fastify';

/** A comment line is written this often while nothing else is, so proxies keep an idle stream open (ms). */
export const AGUI_HEARTBEAT_MS = 15_000;

/**
 * Bytes a stream may hold unsent (its reader is slow or gone quiet); past this it ends with
 * RUN_ERROR SLOW_CONSUMER. The run goes on: a retried POST with the same runId replays it.
 */
export const AGUI_MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

/**
 * One AG-UI response: an SSE body (`data: <event>` frames from @ag-ui/encoder's EventEncoder) sent
 * through Fastify, so the server's hooks (request id, security headers) still apply. A heartbeat comment
 * keeps idle streams open; a reader that lets more than AGUI_MAX_BUFFERED_BYTES pile up is cut off.
 */
export class AguiSseStream {
  private readonly body = new PassThrough();
  private readonly encoder = new EventEncoder();
  private readonly heartbeat: NodeJS.Timeout;
  private readonly closeListeners: (() => void)[] = [];
  private closed = false;

  constructor(reply: FastifyReply) {
    reply.raw.once('close', () => this.close());
    reply
      .status(200)
      .header('content-type', this.encoder.getContentType())
      .header('cache-control', 'no-cache, no-transform')
      .header('x-accel-buffering', 'no');
    void reply.send(this.body);
    this.heartbeat = setInterval(() => this.writeRaw(': keepalive\n\n'), AGUI_HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** True once ended (by us, or the client went away). */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Call `listener` once when the stream ends, whoever ended it. */
  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  /** Write events in order; false when the stream is closed (or was just closed as a slow consumer). */
  write(events: readonly AguiEvent[]): boolean {
    for (const event of events) {
      if (!this.writeRaw(this.encoder.encodeSSE(event))) return false;
    }
    return !this.closed;
  }

  /** End the response. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    this.body.end();
    for (const listener of this.closeListeners.splice(0)) listener();
  }

  private writeRaw(text: string): boolean {
    if (this.closed) return false;
    if (this.body.writableLength + this.body.readableLength > AGUI_MAX_BUFFERED_BYTES) {
      this.body.write(
        this.encoder.encodeSSE({
          type: 'RUN_ERROR',
          message: `slow consumer: more than ${AGUI_MAX_BUFFERED_BYTES} bytes unsent; retry the POST with the same runId to replay the run`,
          code: 'SLOW_CONSUMER',
        } as AguiEvent),
      );
      this.close();
      return false;
    }
    this.body.write(text);
    return true;
  }
}

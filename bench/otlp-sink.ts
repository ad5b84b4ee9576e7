import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An OTLP/HTTP endpoint that takes every export (200) and counts it: the `runs --tracing on` collector. */
export interface OtlpSink {
  readonly url: string;
  readonly exports: number;
  readonly bytes: number;
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  let exports = 0;
  let bytes = 0;
  const server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => (bytes += chunk.length));
    request.on('end', () => {
      exports += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get exports() {
      return exports;
    },
    get bytes() {
      return bytes;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

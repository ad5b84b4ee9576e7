import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a recording receiver got: its headers and raw body, and when. */
export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  raw: string;
  body: Record<string, unknown>;
  atMs: number;
}

/** How the receiver answers its n-th request (0-based): it writes the answer itself. */
export type Answer = (res: ServerResponse, index: number) => void;

/** A receiver on 127.0.0.1 that records every request and answers by `answer`. */
export interface RecordingReceiver {
  url: string;
  readonly received: ReceivedDelivery[];
  /** Answer connections that the server closed before the receiver finished its answer. */
  readonly abandoned: number;
  close(): Promise<void>;
}

/** Answer `status` with a short body. */
export const status =
  (code: number): Answer =>
  (res) =>
    res.writeHead(code, { 'content-type': 'text/plain' }).end(`status ${code}`);

/** Start a recording receiver (default answer: 200). */
export async function startRecordingReceiver(answer: Answer = status(200)): Promise<RecordingReceiver> {
  const received: ReceivedDelivery[] = [];
  let abandoned = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const index = received.length;
      received.push({ headers: req.headers, raw, body: JSON.parse(raw) as Record<string, unknown>, atMs: Date.now() });
      res.on('close', () => {
        if (!res.writableFinished) abandoned += 1;
      });
      answer(res, index);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    get abandoned() {
      return abandoned;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

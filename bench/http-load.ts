import { Agent, request } from 'node:http';
import type { LoadFigures } from './driver-protocol.js';

/** A JSON response: status and parsed body. */
export interface JsonResponse {
  status: number;
  body: unknown;
}

/** A JSON-over-HTTP client on one keep-alive agent. */
export interface JsonClient {
  post(path: string, body: unknown): Promise<JsonResponse>;
  get(path: string): Promise<JsonResponse>;
  close(): void;
}

/** Creates a JSON client for a base URL with a keep-alive agent of `sockets` connections. */
export function createJsonClient(baseUrl: string, sockets: number): JsonClient {
  const agent = new Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
  const base = new URL(baseUrl);
  const send = (method: 'GET' | 'POST', path: string, body: unknown): Promise<JsonResponse> => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers =
      payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': payload.length };
    return new Promise<JsonResponse>((resolve, reject) => {
      const req = request({ agent, host: base.hostname, port: base.port, path, method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          try {
            resolve({ status: res.statusCode ?? 0, body: text === '' ? null : (JSON.parse(text) as unknown) });
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.setNoDelay(true);
      req.end(payload);
    });
  };
  return {
    post: (path, body) => send('POST', path, body),
    get: (path) => send('GET', path, undefined),
    close() {
      agent.destroy();
    },
  };
}

/** Thrown by an iteration whose response was not what the benchmark expects. */
export class UnexpectedResponse extends Error {}

/**
 * Runs `iteration` in a closed loop on `concurrency` workers until `seconds` have passed (or `count`
 * iterations have started), timing each; failures are counted, not thrown. An iteration may return
 * the milliseconds of a part it timed itself.
 */
export async function closedLoop(
  options: { concurrency: number; seconds?: number; count?: number },
  iteration: () => Promise<number | void>,
): Promise<LoadFigures> {
  const latenciesMs: number[] = [];
  const innerLatenciesMs: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let started = 0;
  const start = performance.now();
  const deadline = options.seconds === undefined ? Number.POSITIVE_INFINITY : start + options.seconds * 1000;
  const limit = options.count ?? Number.POSITIVE_INFINITY;
  const worker = async (): Promise<void> => {
    while (started < limit && performance.now() < deadline) {
      started += 1;
      const t0 = performance.now();
      try {
        const inner = await iteration();
        latenciesMs.push(performance.now() - t0);
        if (typeof inner === 'number') innerLatenciesMs.push(inner);
      } catch (error) {
        errors += 1;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const figures: LoadFigures = {
    count: latenciesMs.length,
    errors,
    seconds: (performance.now() - start) / 1000,
    latenciesMs,
    innerLatenciesMs,
  };
  if (firstError !== undefined) figures.firstError = firstError;
  return figures;
}

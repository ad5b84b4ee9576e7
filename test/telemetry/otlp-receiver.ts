import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One exported span as OTLP/HTTP JSON encodes it (ids in hex), its attributes flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
  serviceName: unknown;
  /** The spans this one links to (OTLP `links`), by trace and span id. */
  links: Array<{ traceId: string; spanId: string }>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}

function valueOf(value: OtlpValue | undefined): unknown {
  if (value === undefined) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

function attributesOf(list: Array<{ key: string; value?: OtlpValue }> | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

/** An OTLP/HTTP receiver on 127.0.0.1 (`POST /v1/traces`, JSON encoding), keeping every span and every body. */
export interface OtlpReceiver {
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Every request body as received, for "nothing of the user's leaves" checks. */
  readonly bodies: string[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      bodies.push(body);
      if (
        request.method !== 'POST' ||
        request.url !== '/v1/traces' ||
        !/json/.test(request.headers['content-type'] ?? '')
      ) {
        response.writeHead(400).end();
        return;
      }
      const decoded = JSON.parse(body) as {
        resourceSpans?: Array<{
          resource?: { attributes?: Array<{ key: string; value?: OtlpValue }> };
          scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }>;
        }>;
      };
      for (const resource of decoded.resourceSpans ?? []) {
        const serviceName = attributesOf(resource.resource?.attributes)['service.name'];
        for (const scope of resource.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            spans.push({
              traceId: String(span.traceId),
              spanId: String(span.spanId),
              parentSpanId: String(span.parentSpanId ?? ''),
              name: String(span.name),
              kind: Number(span.kind),
              attributes: attributesOf(span.attributes as Array<{ key: string; value?: OtlpValue }>),
              status: (span.status ?? {}) as ReceivedSpan['status'],
              serviceName,
              links: ((span.links ?? []) as Array<{ traceId?: unknown; spanId?: unknown }>).map((link) => ({
                traceId: String(link.traceId),
                spanId: String(link.spanId),
              })),
            });
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { SpanAttributes, Telemetry, TraceParent, TraceSpan } from '../runtime/ports/telemetry.js';

/** A place in a trace: the OpenTelemetry context a child span starts in. */
class OtelParent implements TraceParent {
  constructor(
    readonly traceId: string,
    readonly context: Context,
  ) {}
}

/** Attributes without the undefined entries (OpenTelemetry drops them with a warning). */
function attributesOf(attributes: SpanAttributes | undefined): Attributes {
  const out: Attributes = {};
  if (attributes === undefined) return out;
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) out[name] = value as string[];
  return out;
}

class OtelSpan extends OtelParent implements TraceSpan {
  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
    context: Context,
  ) {
    super(span.spanContext().traceId, context);
  }

  setAttributes(attributes: SpanAttributes): void {
    this.span.setAttributes(attributesOf(attributes));
  }

  fail(description: string): void {
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: description });
  }

  child(name: string, attributes?: SpanAttributes, kind: 'internal' | 'client' = 'internal'): TraceSpan {
    return startSpan(
      this.tracer,
      name,
      kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL,
      attributes,
      this.context,
    );
  }

  end(): void {
    this.span.end();
  }
}

function startSpan(
  tracer: Tracer,
  name: string,
  kind: SpanKind,
  attributes: SpanAttributes | undefined,
  parent: Context,
): OtelSpan {
  const span = tracer.startSpan(name, { kind, attributes: attributesOf(attributes) }, parent);
  return new OtelSpan(tracer, span, trace.setSpan(parent, span));
}

/**
 * Traces through the official SDK (`@opentelemetry/sdk-node`), configured by the standard `OTEL_*` variables,
 * exported with OTLP/HTTP (JSON). Only W3C trace context is read from requests, and only its `traceparent`: a
 * client's `tracestate` and `baggage` never reach a span. No automatic instrumentation is loaded: every span is
 * made here, with the attributes the runtime passes (ids, names, counts, statuses).
 */
export function createOtelTelemetry(env: NodeJS.ProcessEnv, version: string): Telemetry {
  const sdk = new NodeSDK({
    ...(env.OTEL_SERVICE_NAME ? {} : { serviceName: 'a3s-code-server' }),
    traceExporter: new OTLPTraceExporter(),
    textMapPropagator: new W3CTraceContextPropagator(),
    instrumentations: [],
  });
  sdk.start();
  const tracer = trace.getTracer('a3s-code-server', version);
  const propagator = new W3CTraceContextPropagator();
  return {
    span(name, kind, attributes, parent) {
      const context = parent instanceof OtelParent ? parent.context : ROOT_CONTEXT;
      return startSpan(tracer, name, kind === 'server' ? SpanKind.SERVER : SpanKind.INTERNAL, attributes, context);
    },
    incoming(headers) {
      const header = headers.traceparent;
      const traceparent = Array.isArray(header) ? header[0] : header;
      if (traceparent === undefined) return undefined;
      const extracted = propagator.extract(
        ROOT_CONTEXT,
        { traceparent },
        {
          get: (carrier, key) => carrier[key as 'traceparent'],
          keys: (carrier) => Object.keys(carrier),
        },
      );
      const remote = trace.getSpanContext(extracted);
      if (remote === undefined || !trace.isSpanContextValid(remote)) return undefined;
      return new OtelParent(remote.traceId, extracted);
    },
    shutdown: () => sdk.shutdown(),
  };
}

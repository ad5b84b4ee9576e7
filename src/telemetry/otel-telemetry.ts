import {
  ROOT_CONTEXT,
  context as otelContext,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { ContentCapture, SpanAttributes, Telemetry, TraceParent, TraceSpan } from '../runtime/ports/telemetry.js';

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

/** What every span of one tracer shares: the tracer and the content rule (telemetry.capture_content). */
interface SpanShared {
  readonly tracer: Tracer;
  readonly content: ContentCapture | undefined;
}

class OtelSpan extends OtelParent implements TraceSpan {
  constructor(
    private readonly shared: SpanShared,
    private readonly span: Span,
    context: Context,
  ) {
    super(span.spanContext().traceId, context);
  }

  get traceparent(): string {
    const { traceId, spanId, traceFlags } = this.span.spanContext();
    return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
  }

  get capturesContent(): boolean {
    return this.shared.content !== undefined;
  }

  setContent(attributes: Readonly<Record<string, unknown>>): void {
    const content = this.shared.content;
    if (content === undefined) return;
    const out: Attributes = {};
    for (const [name, value] of Object.entries(attributes)) {
      if (value === undefined) continue;
      out[name] = content.redact(typeof value === 'string' ? value : JSON.stringify(value));
    }
    this.span.setAttributes(out);
  }

  within<T>(work: () => T): T {
    return otelContext.with(this.context, work);
  }

  setAttributes(attributes: SpanAttributes): void {
    this.span.setAttributes(attributesOf(attributes));
  }

  fail(description: string): void {
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: description });
  }

  child(name: string, attributes?: SpanAttributes, kind: 'internal' | 'client' = 'internal'): TraceSpan {
    return startSpan(
      this.shared,
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
  shared: SpanShared,
  name: string,
  kind: SpanKind,
  attributes: SpanAttributes | undefined,
  parent: Context,
  links?: Link[],
): OtelSpan {
  const span = shared.tracer.startSpan(
    name,
    { kind, attributes: attributesOf(attributes), ...(links ? { links } : {}) },
    parent,
  );
  return new OtelSpan(shared, span, trace.setSpan(parent, span));
}

/** The span context a link points at (a parent read from a header or a checkpoint, or a span of ours). */
function linkOf(parent: TraceParent): Link | undefined {
  if (!(parent instanceof OtelParent)) return undefined;
  const spanContext = trace.getSpanContext(parent.context);
  return spanContext === undefined ? undefined : { context: spanContext };
}

/**
 * Traces through the official SDK (`@opentelemetry/sdk-node`), configured by the standard `OTEL_*` variables,
 * exported with OTLP/HTTP (JSON). Only W3C trace context is read from requests, and only its `traceparent`: a
 * client's `tracestate` and `baggage` never reach a span. No automatic instrumentation is loaded: every span is
 * made here, with the attributes the runtime passes (ids, names, counts, statuses).
 */
export function createOtelTelemetry(
  env: NodeJS.ProcessEnv,
  version: string,
  content: ContentCapture | undefined,
): Telemetry {
  const sdk = new NodeSDK({
    ...(env.OTEL_SERVICE_NAME ? {} : { serviceName: 'a3s-code-server' }),
    traceExporter: new OTLPTraceExporter(),
    textMapPropagator: new W3CTraceContextPropagator(),
    instrumentations: [],
  });
  sdk.start();
  const shared: SpanShared = { tracer: trace.getTracer('a3s-code-server', version), content };
  const propagator = new W3CTraceContextPropagator();
  return {
    span(name, kind, attributes, parent, links) {
      const context = parent instanceof OtelParent ? parent.context : ROOT_CONTEXT;
      const linked = links?.flatMap((link) => linkOf(link) ?? []);
      return startSpan(
        shared,
        name,
        kind === 'server' ? SpanKind.SERVER : SpanKind.INTERNAL,
        attributes,
        context,
        linked !== undefined && linked.length > 0 ? linked : undefined,
      );
    },
    active() {
      const active = otelContext.active();
      const span = trace.getSpan(active);
      return span === undefined ? undefined : new OtelSpan(shared, span, active);
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

/** A span attribute value (OpenTelemetry's primitive values and their arrays). */
export type SpanAttributeValue = string | number | boolean | readonly string[];

/** Span attributes by their semantic-convention names. */
export type SpanAttributes = Readonly<Record<string, SpanAttributeValue | undefined>>;

/** Where a span sits in a trace: opaque to the runtime (an OpenTelemetry context). */
export interface TraceParent {
  readonly traceId: string;
}

/** One span the runtime started: it adds attributes, starts children and ends it once. */
export interface TraceSpan extends TraceParent {
  setAttributes(attributes: SpanAttributes): void;
  /** Mark the span failed with a short description (an error code and status, never user content). */
  fail(description: string): void;
  /** A child span (an internal one unless `client`). */
  child(name: string, attributes?: SpanAttributes, kind?: 'internal' | 'client'): TraceSpan;
  end(): void;
}

/**
 * Traces (docs/operations.md "Traces"): absent when no OTLP exporter is configured, so a run without tracing
 * allocates nothing for it. Spans carry ids, names, counts and statuses only: no prompt, model output, tool
 * argument or output, header or query string.
 */
export interface Telemetry {
  /** A span; with a parent it joins that trace, else it starts one. */
  span(name: string, kind: 'server' | 'internal', attributes: SpanAttributes, parent?: TraceParent): TraceSpan;
  /** The W3C `traceparent` of a request's headers as a parent (`tracestate` and `baggage` are dropped), if valid. */
  incoming(headers: Readonly<Record<string, string | string[] | undefined>>): TraceParent | undefined;
  /** Export what is buffered and stop. */
  shutdown(): Promise<void>;
}

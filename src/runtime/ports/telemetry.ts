/** A span attribute value (OpenTelemetry's primitive values and their arrays). */
export type SpanAttributeValue = string | number | boolean | readonly string[];

/** Span attributes by their semantic-convention names. */
export type SpanAttributes = Readonly<Record<string, SpanAttributeValue | undefined>>;

/** Where a span sits in a trace: opaque to the runtime (an OpenTelemetry context). */
export interface TraceParent {
  readonly traceId: string;
}

/** `telemetry.capture_content`: content is recorded on spans, each value through the server's secret redactor. */
export interface ContentCapture {
  redact(text: string): string;
}

/** One span the runtime started: it adds attributes, starts children and ends it once. */
export interface TraceSpan extends TraceParent {
  /** This span as a W3C `traceparent` (kept in a run's checkpoints, so a resumed run continues the trace). */
  readonly traceparent: string;
  setAttributes(attributes: SpanAttributes): void;
  /** Mark the span failed with a short description (an error code and status, never user content). */
  fail(description: string): void;
  /** A child span (an internal one unless `client`). */
  child(name: string, attributes?: SpanAttributes, kind?: 'internal' | 'client'): TraceSpan;
  /** True when the operator set `telemetry.capture_content`: `setContent` records, else it does nothing. */
  readonly capturesContent: boolean;
  /**
   * Content attributes (prompts, messages, tool arguments and output), recorded only with `telemetry.capture_content`
   * and then through the secret redactor: strings as they are, anything else as JSON.
   */
  setContent(attributes: Readonly<Record<string, unknown>>): void;
  /** Run `work` with this span active, so what it calls (Redis round trips) can find it: see `Telemetry.active`. */
  within<T>(work: () => T): T;
  end(): void;
}

/**
 * Traces (docs/operations.md "Traces"): absent when no OTLP exporter is configured, so a run without tracing
 * allocates nothing for it. Spans carry ids, names, counts and statuses only: no prompt, model output, tool
 * argument or output, header or query string.
 */
export interface Telemetry {
  /** A span; with a parent it joins that trace, else it starts one; `links` point at spans of other traces. */
  span(
    name: string,
    kind: 'server' | 'internal',
    attributes: SpanAttributes,
    parent?: TraceParent,
    links?: readonly TraceParent[],
  ): TraceSpan;
  /** The W3C `traceparent` of a request's headers as a parent (`tracestate` and `baggage` are dropped), if valid. */
  incoming(headers: Readonly<Record<string, string | string[] | undefined>>): TraceParent | undefined;
  /** The span `within` made active where this is called (absent outside a traced run). */
  active(): TraceSpan | undefined;
  /** Export what is buffered and stop. */
  shutdown(): Promise<void>;
}

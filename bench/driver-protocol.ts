/** A tool call the bench provider answers with. */
export interface BenchToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** The delegation mode of the bench provider: a parent that delegates, and children that each do one tool round. */
export interface BenchDelegation {
  /** A request none of whose user messages starts with childPrefix (the parent's) is answered with this. */
  parentToolCall: BenchToolCall;
  /** Marks a child's request: one of its user messages (the task's prompt) starts with this. */
  childPrefix: string;
  /** A child's request whose last message is not a tool result is answered with this. */
  childToolCall: BenchToolCall;
}

/** Options of the bench provider: what it answers and how fast it streams. */
export interface BenchProviderOptions {
  /** Number of text chunks in a text answer. */
  answerChunks: number;
  /** Text of one chunk. */
  chunkText: string;
  /** When set, a request whose last message is not a tool result is answered with this tool call. */
  toolCall?: BenchToolCall;
  /** When set (instead of toolCall), tool calls are chosen as in BenchDelegation; tool results still get text. */
  delegation?: BenchDelegation;
  /** Stream text chunks at this rate (chunks per second); unset streams as fast as the socket takes them. */
  chunksPerSecond?: number;
}

/** Latency figures of a closed-loop load phase. */
export interface LoadFigures {
  /** Completed iterations. */
  count: number;
  /** Failed iterations (non-2xx or an unexpected body). */
  errors: number;
  /** Measured wall time in seconds. */
  seconds: number;
  /** Iteration latencies in milliseconds, unsorted. */
  latenciesMs: number[];
  /** Latencies of the part of an iteration it chose to time itself (e.g. the run request alone). */
  innerLatenciesMs: number[];
  /** The first error seen, for diagnosis. */
  firstError?: string;
}

/** Parameters of a closed-loop load phase against the server. */
export interface LoadParams {
  baseUrl: string;
  concurrency: number;
  seconds: number;
}

/** Parameters of a delegation load phase: parent runs whose final answer must be `expectedText`. */
export interface DelegationLoadParams extends LoadParams {
  expectedText: string;
}

/** Figures of a delegation load phase, with the provider requests it caused (parent and children). */
export interface DelegationLoadFigures extends LoadFigures {
  providerRequests: number;
  /** The tool result the latest parent's model saw (what parallel_task returned), cut to 500 characters. */
  parentToolResult?: string;
  /** The tool result the latest child's model saw (its `read`), cut to 500 characters. */
  childToolResult?: string;
}

/** Parameters of a one-off batch of session creations. */
export interface CreateSessionsParams {
  baseUrl: string;
  count: number;
  concurrency: number;
}

/** Parameters of one WebSocket fan-out phase. */
export interface WsPhaseParams {
  baseUrl: string;
  sessionId: string;
  subscribers: number;
  provider: BenchProviderOptions;
  /** Give up waiting for agent_end after this long. */
  timeoutMs: number;
  /** How the subscribers read the events route (default the WebSocket). */
  transport?: 'ws' | 'sse';
}

/** What the subscribers of one WebSocket phase saw. */
export interface WsPhaseFigures {
  /** Frames received by all subscribers together. */
  frames: number;
  /** Frames received by the subscriber that got the most (the events one subscriber should see). */
  framesPerSubscriber: number;
  /** First to last frame received, in milliseconds. */
  windowMs: number;
  /** Emit-to-receive latency histogram: index = whole milliseconds (last bucket collects the rest). */
  latencyHistogram: number[];
  /** Close codes of subscribers the server closed, with counts. */
  closedByServer: Record<string, number>;
  /** Subscribers that saw agent_end. */
  finished: number;
  timedOut: boolean;
}

/** Every operation the driver process performs, with its parameters and result. */
export interface DriverOps {
  'start-provider': { params: BenchProviderOptions; result: { baseUrl: string } };
  'configure-provider': { params: BenchProviderOptions; result: null };
  'runs-load': { params: LoadParams; result: LoadFigures };
  'delegation-load': { params: DelegationLoadParams; result: DelegationLoadFigures };
  'sessions-load': { params: LoadParams; result: LoadFigures };
  'create-sessions': { params: CreateSessionsParams; result: LoadFigures };
  'ws-phase': { params: WsPhaseParams; result: WsPhaseFigures };
  /** An OTLP/HTTP collector in the driver (its CPU is not the server's); later calls answer its counts so far. */
  'otlp-sink': { params: null; result: { url: string; exports: number; bytes: number } };
}

/** The name of a driver operation. */
export type DriverOp = keyof DriverOps;

/** A request from the bench process to the driver process. */
export interface DriverRequest<K extends DriverOp = DriverOp> {
  id: number;
  op: K;
  params: DriverOps[K]['params'];
}

/** The driver's answer to one request. */
export type DriverResponse = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };

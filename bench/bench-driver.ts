// Entry of the driver process forked by driver-client: it answers DriverRequests over IPC.
import { startBenchProvider, type BenchProvider } from './bench-provider.js';
import { startOtlpSink, type OtlpSink } from './otlp-sink.js';
import { delegationLoad } from './delegation-bench.js';
import type { DriverOp, DriverOps, DriverRequest, DriverResponse } from './driver-protocol.js';
import { runsLoad } from './runs-bench.js';
import { createSessionsLoad, sessionsLoad } from './sessions-bench.js';
import { wsPhase } from './ws-bench.js';

/** State the driver keeps between requests. */
interface DriverState {
  provider: BenchProvider | undefined;
  otlp: OtlpSink | undefined;
}

type Handlers = {
  [K in DriverOp]: (params: DriverOps[K]['params'], state: DriverState) => Promise<DriverOps[K]['result']>;
};

const handlers: Handlers = {
  'start-provider': async (params, state) => {
    state.provider ??= await startBenchProvider(params);
    state.provider.configure(params);
    return { baseUrl: state.provider.baseUrl };
  },
  'configure-provider': async (params, state) => {
    if (!state.provider) throw new Error('the provider is not started');
    state.provider.configure(params);
    return null;
  },
  'runs-load': (params) => runsLoad(params),
  'delegation-load': async (params, state) => {
    if (!state.provider) throw new Error('the provider is not started');
    const before = state.provider.requests;
    const figures = await delegationLoad(params);
    const { parent, child } = state.provider.lastToolResults;
    return {
      ...figures,
      providerRequests: state.provider.requests - before,
      ...(parent !== undefined ? { parentToolResult: parent.slice(0, 500) } : {}),
      ...(child !== undefined ? { childToolResult: child.slice(0, 500) } : {}),
    };
  },
  'sessions-load': (params) => sessionsLoad(params),
  'create-sessions': (params) => createSessionsLoad(params),
  'otlp-sink': async (_params, state) => {
    state.otlp ??= await startOtlpSink();
    return { url: state.otlp.url, exports: state.otlp.exports, bytes: state.otlp.bytes };
  },
  'ws-phase': (params, state) => {
    if (!state.provider) throw new Error('the provider is not started');
    return wsPhase(params, state.provider);
  },
};

const state: DriverState = { provider: undefined, otlp: undefined };

async function dispatch<K extends DriverOp>(request: DriverRequest<K>): Promise<DriverOps[K]['result']> {
  const handler = handlers[request.op] as (
    params: DriverOps[K]['params'],
    state: DriverState,
  ) => Promise<DriverOps[K]['result']>;
  return handler(request.params, state);
}

process.on('message', (request: DriverRequest) => {
  dispatch(request).then(
    (result) => reply({ id: request.id, ok: true, result }),
    (error: unknown) =>
      reply({
        id: request.id,
        ok: false,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      }),
  );
});

process.on('disconnect', () => {
  const closing = state.provider ? state.provider.close() : Promise.resolve();
  void closing.finally(() => process.exit(0));
});

function reply(response: DriverResponse): void {
  process.send?.(response);
}

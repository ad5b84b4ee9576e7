import type { CodeConfig } from '../config/code-config.js';
import { buildApp, type BuiltApp } from '../app.js';
import { createRuntimeContext, type RuntimeContext, type RuntimeOverrides } from '../context.js';
import { WS_CLOSE } from '../protocol/ws-messages.js';
import { SERVICE_RESTART_CLOSE } from './socket-registry.js';
import { isLoopbackHost } from './authenticator.js';

/** A listening server and its ordered shutdown. */
export interface RunningServer extends BuiltApp {
  ctx: RuntimeContext;
  /** The address it listens on, e.g. http://127.0.0.1:8080. */
  url: string;
  port: number;
  /** Stop admission, close sockets (1001), cancel and drain runs, close sessions, then the store. */
  close(): Promise<void>;
}

/** Refuse configurations that would expose an unauthenticated server beyond loopback. */
export function assertSafeBind(config: CodeConfig): void {
  if (config.apiTokens.length === 0 && !isLoopbackHost(config.host)) {
    throw new Error(
      `refusing to listen on ${config.host} without API tokens: set A3S_API_TOKENS (or api_tokens in the config file), or bind to 127.0.0.1`,
    );
  }
}

/** Build the context and app and listen on the configured host and port. */
export async function startServer(config: CodeConfig, overrides: RuntimeOverrides = {}): Promise<RunningServer> {
  assertSafeBind(config);
  const ctx = await createRuntimeContext(config, overrides);
  const built = await buildApp(ctx);
  await built.app.listen({ host: config.host, port: config.port });
  const address = built.app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  await ctx.onListening(`http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`);
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      ctx.agent.beginShutdown();
      built.sockets.closeAll('server shutting down', ctx.clustered ? SERVICE_RESTART_CLOSE : WS_CLOSE.goingAway);
      ctx.forwarder.closeAll();
      // Every step runs even when an earlier one fails (a store that is down must not keep the port open).
      const step = async (what: string, run: () => Promise<unknown>): Promise<void> => {
        await run().catch((error: unknown) =>
          ctx.logger.error({ err: error instanceof Error ? error.message : String(error) }, `shutdown: ${what} failed`),
        );
      };
      await step('draining sessions', () => ctx.agent.close());
      await step('closing the HTTP server', () => built.app.close());
      await step('closing providers and Redis', () => ctx.dispose());
    })();
    return closing;
  };
  return { ...built, ctx, url: `http://${host}:${port}`, port, close };
}

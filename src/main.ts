import { parseArgs } from 'node:util';
import { configWarnings } from './config/config-warnings.js';
import { ConfigError } from './config/config-error.js';
import { loadConfig } from './config/load-config.js';
import { startServer } from './server/start-server.js';
import { tracesRequested } from './telemetry/start-telemetry.js';
import { startupSummary } from './server/startup-summary.js';

/** Process entry: load config, start the server, shut down in order on SIGINT/SIGTERM. */
export async function main(argv: string[] = process.argv.slice(2)): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { config: { type: 'string', short: 'c' } }, strict: true });
  let config;
  try {
    config = await loadConfig({ env: process.env, cwd: process.cwd(), configPath: values.config });
    // The OTEL_* variables are the SDK's; what this server would not act on fails here, like a config mistake.
    tracesRequested(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const server = await startServer(config);
  // Seed keys this server accepts but does not use yet: named once at start, never fatal.
  for (const warning of configWarnings(config)) server.ctx.logger.warn({ configKey: warning.key }, warning.message);
  const summary = startupSummary(
    config,
    { url: server.url, store: server.ctx.store.kind, sandbox: server.ctx.sandbox },
    process.cwd(),
  );
  for (const warning of summary.warnings) server.ctx.logger.warn(warning);
  server.ctx.logger.info(summary.fields, 'A3S Code Server listening');
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.ctx.logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        server.ctx.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  process.stderr.write(`a3s-code-server failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

import { ConfigError } from '../config/config-error.js';
import type { ContentCapture, Telemetry } from '../runtime/ports/telemetry.js';

const PROTOCOL_KEYS = ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL'] as const;

/**
 * Whether the standard variables ask for traces: an OTLP endpoint (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_ENDPOINT`), unless `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. Settings this
 * server does not act on are refused by name: another exporter than `otlp`, another protocol than `http/json`.
 */
export function tracesRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim();
  if (exporter === 'none') return false;
  if (exporter !== undefined && exporter !== '' && exporter !== 'otlp')
    throw new ConfigError([
      {
        source: 'OTEL_TRACES_EXPORTER',
        message: `"${exporter}": only "otlp" (OTLP/HTTP, JSON) or "none" is supported`,
      },
    ]);
  for (const key of PROTOCOL_KEYS) {
    const protocol = env[key]?.trim();
    if (protocol !== undefined && protocol !== '' && protocol !== 'http/json')
      throw new ConfigError([{ source: key, message: `"${protocol}": only "http/json" is supported` }]);
  }
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}

/**
 * Start tracing when the environment asks for it (docs/operations.md "Traces"); otherwise answer undefined
 * without importing the SDK: a server without OTEL_* variables never loads it. With `content`
 * (`telemetry.capture_content`), spans also carry prompts, messages and tool input and output, redacted by it.
 */
export async function startTelemetry(
  env: NodeJS.ProcessEnv,
  version: string,
  content?: ContentCapture,
): Promise<Telemetry | undefined> {
  if (!tracesRequested(env)) return undefined;
  const { createOtelTelemetry } = await import('./otel-telemetry.js');
  return createOtelTelemetry(env, version, content);
}

// Loaded with `node --import`: records to $A3S_IMPORT_LOG every module URL resolved whose path names
// @opentelemetry/sdk (the tracing SDK), so a test can show that a server without OTEL_* never loads it.
import { register } from 'node:module';

const hooks = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.url.includes('@opentelemetry/sdk') && process.env.A3S_IMPORT_LOG)
    appendFileSync(process.env.A3S_IMPORT_LOG, resolved.url + '\\n');
  return resolved;
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);

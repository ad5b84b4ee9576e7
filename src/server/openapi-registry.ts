import type { z } from 'zod';

/** One documented operation. */
export interface OpenApiOperation {
  method: string;
  url: string;
  summary: string;
  scope: string | null;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  responses: Record<number, z.ZodType | null>;
  headers?: Record<string, string>;
  description?: string;
  /** Media type of the success (2xx) responses when not JSON, e.g. `text/plain`; errors stay JSON. */
  produces?: string;
}

/** True for a route on one session (`/v1/sessions/:id...`): it answers 404, 410 SESSION_CLOSED and 421 SESSION_OWNED_ELSEWHERE. */
export function isSessionScoped(route: { url: string }): boolean {
  return route.url === '/v1/sessions/:id' || route.url.startsWith('/v1/sessions/:id/');
}

/** True for a route that starts a run (a new one or a resumed one): while draining it answers 503 SHUTTING_DOWN. */
export function startsRun(route: { method: string; url: string }): boolean {
  return (
    route.method === 'POST' && isSessionScoped(route) && (route.url.endsWith('/runs') || route.url.endsWith('/resume'))
  );
}

/** True for a route that starts a session or a run: while draining it answers 503 SHUTTING_DOWN. */
export function admitsWork(route: { method: string; url: string }): boolean {
  return (route.method === 'POST' && route.url === '/v1/sessions') || startsRun(route);
}

/** Collects every route's schemas as the routes register, so openapi.yaml derives from the same zod schemas. */
export class OpenApiRegistry {
  readonly operations: OpenApiOperation[] = [];

  /** Record one operation. */
  add(operation: OpenApiOperation): void {
    this.operations.push(operation);
  }
}

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
}

/** Collects every route's schemas as the routes register, so openapi.yaml derives from the same zod schemas. */
export class OpenApiRegistry {
  readonly operations: OpenApiOperation[] = [];

  /** Record one operation. */
  add(operation: OpenApiOperation): void {
    this.operations.push(operation);
  }
}

import { z } from 'zod';

/** The slug a memory namespace must be (always inside the caller's tenant). */
export const MEMORY_NAMESPACE_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Longest task, result or error text a remember body may carry (characters). */
export const MEMORY_TEXT_MAX = 20_000;
/** Most tool names a remember body may carry. */
export const MEMORY_TOOLS_MAX = 64;
/** Largest `limit` a recall may ask for. */
export const MEMORY_LIMIT_MAX = 100;

/** The seed's memory types. */
export const MemoryTypeSchema = z.enum(['episodic', 'semantic', 'procedural', 'working']);

/** One stored memory (the seed's MemoryItem, snake_case as on the wire). */
export const MemoryItemSchema = z
  .object({
    id: z.string().min(1).max(200),
    content: z.string(),
    timestamp: z.number().int().nonnegative(),
    importance: z.number().min(0).max(1),
    tags: z.array(z.string()),
    memory_type: MemoryTypeSchema,
    metadata: z.record(z.string(), z.unknown()),
    access_count: z.number().int().nonnegative(),
    last_accessed: z.number().int().nonnegative().optional(),
  })
  .meta({ id: 'MemoryItem' });

/** `memoryStore` of SessionOptions: `file` = the server's durable backend (files, or Redis with REDIS_URL); `memory` = this process. */
export const MemoryStoreOptionSchema = z
  .object({
    type: z.enum(['file', 'memory'], { error: () => 'memoryStore.type must be one of "file", "memory"' }),
    namespace: z
      .string()
      .regex(
        MEMORY_NAMESPACE_PATTERN,
        'memoryStore.namespace must be 1-64 characters of a-z, 0-9, "_" or "-", starting with a letter or digit',
      )
      .optional(),
  })
  .strict()
  .meta({ id: 'MemoryStoreOption' });

const text = (field: string) =>
  z
    .string()
    .trim()
    .min(1, `${field} must not be empty`)
    .max(MEMORY_TEXT_MAX, `${field} must be at most ${MEMORY_TEXT_MAX} characters`);
const tools = z.array(z.string().min(1).max(200)).max(MEMORY_TOOLS_MAX);

/** Body of POST .../memory/success (the seed's rememberSuccess). */
export const RememberSuccessBodySchema = z
  .object({ task: text('task'), tools: tools.default([]), result: z.string().max(MEMORY_TEXT_MAX) })
  .strict()
  .meta({ id: 'RememberSuccessBody' });
/** Body of POST .../memory/failure (the seed's rememberFailure). */
export const RememberFailureBodySchema = z
  .object({ task: text('task'), error: text('error'), tools: tools.default([]) })
  .strict()
  .meta({ id: 'RememberFailureBody' });

const limit = (fallback: number) => z.coerce.number().int().min(1).max(MEMORY_LIMIT_MAX).default(fallback);

/** Query of GET .../memory/recent. */
export const MemoryRecentQuerySchema = z.object({ limit: limit(10) }).strict();
/** Query of GET .../memory/similar. */
export const MemorySimilarQuerySchema = z
  .object({ query: z.string().min(1, 'query must not be empty').max(2000), limit: limit(5) })
  .strict();
/** Query of GET .../memory/tags (`tags=a,b`). */
export const MemoryTagsQuerySchema = z
  .object({
    tags: z
      .string()
      .max(2000)
      .transform((value) =>
        value
          .split(',')
          .map((t) => t.trim())
          .filter((t) => t.length > 0),
      )
      .pipe(z.array(z.string().max(200)).min(1, 'tags must name at least one tag').max(64)),
    limit: limit(10),
  })
  .strict();

/** Answer of the memory recall routes. */
export const MemoryItemsResponseSchema = z
  .object({ items: z.array(MemoryItemSchema) })
  .meta({ id: 'MemoryItemsResponse' });
/** Answer of the remember routes: the stored item. */
export const MemoryItemResponseSchema = z.object({ item: MemoryItemSchema }).meta({ id: 'MemoryItemResponse' });
/** Answer of GET .../memory/stats (the seed's memoryStats). */
export const MemoryStatsSchema = z
  .object({
    longTermCount: z.number().int().nonnegative(),
    shortTermCount: z.number().int().nonnegative(),
    workingCount: z.number().int().nonnegative(),
  })
  .meta({ id: 'MemoryStats' });

/** Answer of DELETE .../memory/working and .../memory/short-term: how many items the tier held. */
export const MemoryClearedResponseSchema = z
  .object({ tier: z.enum(['working', 'short_term']), count: z.number().int().nonnegative() })
  .meta({ id: 'MemoryClearedResponse' });

/** A stored memory. */
export type MemoryItem = z.infer<typeof MemoryItemSchema>;
/** The seed's memory types. */
export type MemoryType = z.infer<typeof MemoryTypeSchema>;
/** The seed's memoryStats. */
export type MemoryStats = z.infer<typeof MemoryStatsSchema>;
/** A session's memoryStore option. */
export type MemoryStoreOption = z.infer<typeof MemoryStoreOptionSchema>;

import type { FastifyInstance } from 'fastify';
import { CodeError } from '../errors.js';
import { ErrorBodySchema, SessionParamsSchema } from '../protocol/http.js';
import {
  MemoryClearedResponseSchema,
  MemoryItemResponseSchema,
  MemoryItemsResponseSchema,
  MemoryRecentQuerySchema,
  MemorySimilarQuerySchema,
  MemoryStatsSchema,
  MemoryTagsQuerySchema,
  RememberFailureBodySchema,
  RememberSuccessBodySchema,
} from '../protocol/memory.js';
import type { AgentMemory } from '../runtime/memory/agent-memory.js';
import type { Caller } from '../runtime/ports/caller.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

/** What the memory routes need of a session. */
export interface MemorySessionPort {
  readonly id: string;
  readonly memory: AgentMemory | undefined;
  readonly lifecycle: { assertOpen(): void };
}

const errors = { 400: ErrorBodySchema, 404: ErrorBodySchema, 409: ErrorBodySchema, 410: ErrorBodySchema };

/** The seed's memory API over REST: remember success/failure, recall recent/similar/by tags, stats, the working and short-term tiers (scope `sessions`). */
export function registerMemoryRoutes(
  app: FastifyInstance,
  ctx: ServerContext,
  getSession: (id: string, caller: Caller) => MemorySessionPort,
): void {
  const memoryOf = (id: string, caller: Caller): AgentMemory => {
    const session = getSession(id, caller);
    session.lifecycle.assertOpen();
    if (!session.memory) {
      throw new CodeError(
        'MEMORY_NOT_CONFIGURED',
        `session ${session.id} has no memory store; create it with memoryStore {type: "file"} or {type: "memory"}`,
        { sessionId: session.id, field: 'memoryStore' },
      );
    }
    return session.memory;
  };
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/memory/success',
      summary: 'Remember a successful task (rememberSuccess)',
      description:
        'Stores "Success: {task}\\nTools: a, b\\nResult: {result}" with importance 0.8, tags success/pattern, type procedural; emits memory_stored.',
      scope: 'sessions',
      params: SessionParamsSchema,
      body: RememberSuccessBodySchema,
      responses: { 201: MemoryItemResponseSchema, ...errors },
    },
    async ({ params, body, caller, reply }) => {
      const item = await memoryOf(params.id, caller).rememberSuccess(body.task, body.tools, body.result);
      reply.status(201);
      return { item };
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/memory/failure',
      summary: 'Remember a failed task (rememberFailure)',
      description:
        'Stores "Failure: {task}\\nError: {error}\\nAttempted tools: ..." with importance 0.9, tags failure/avoid, type episodic; emits memory_stored.',
      scope: 'sessions',
      params: SessionParamsSchema,
      body: RememberFailureBodySchema,
      responses: { 201: MemoryItemResponseSchema, ...errors },
    },
    async ({ params, body, caller, reply }) => {
      const item = await memoryOf(params.id, caller).rememberFailure(body.task, body.error, body.tools);
      reply.status(201);
      return { item };
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/memory/recent',
      summary: 'The newest memories, newest first (memoryRecent; limit 1-100, default 10)',
      scope: 'sessions',
      params: SessionParamsSchema,
      query: MemoryRecentQuerySchema,
      responses: { 200: MemoryItemsResponseSchema, ...errors },
    },
    async ({ params, query, caller }) => ({ items: await memoryOf(params.id, caller).recent(query.limit) }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/memory/similar',
      summary:
        'Memories whose content contains the query, case-insensitive, most relevant first (recallSimilar; limit default 5)',
      description:
        'Relevance = importance*0.7 + exp(-age_days/30)*0.3. Each hit counts as an access and emits memory_recalled; the search emits memories_searched.',
      scope: 'sessions',
      params: SessionParamsSchema,
      query: MemorySimilarQuerySchema,
      responses: { 200: MemoryItemsResponseSchema, ...errors },
    },
    async ({ params, query, caller }) => ({
      items: await memoryOf(params.id, caller).recallSimilar(query.query, query.limit),
    }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/memory/tags',
      summary: 'Memories carrying any of the tags (tags=a,b), most relevant first (recallByTags; limit default 10)',
      scope: 'sessions',
      params: SessionParamsSchema,
      query: MemoryTagsQuerySchema,
      responses: { 200: MemoryItemsResponseSchema, ...errors },
    },
    async ({ params, query, caller }) => ({
      items: await memoryOf(params.id, caller).recallByTags(query.tags, query.limit),
    }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/memory/stats',
      summary: 'Counts of the memory tiers (memoryStats)',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: MemoryStatsSchema, ...errors },
    },
    async ({ params, caller }) => memoryOf(params.id, caller).stats(),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/memory/working',
      summary: 'The working tier: at most 10 items, kept by relevance (getWorking)',
      description: "Working and short-term tiers are this session's, in process (not part of snapshots).",
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: MemoryItemsResponseSchema, ...errors },
    },
    async ({ params, caller }) => ({ items: memoryOf(params.id, caller).getWorking() }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'DELETE',
      url: '/v1/sessions/:id/memory/working',
      summary: 'Empty the working tier (clearWorking); emits memory_cleared {tier: "working", count}',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: MemoryClearedResponseSchema, ...errors },
    },
    async ({ params, caller }) => ({ tier: 'working' as const, count: memoryOf(params.id, caller).clearWorking() }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/memory/short-term',
      summary: "The short-term ring: this session's last 100 items, oldest first (getShortTerm)",
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: MemoryItemsResponseSchema, ...errors },
    },
    async ({ params, caller }) => ({ items: memoryOf(params.id, caller).getShortTerm() }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'DELETE',
      url: '/v1/sessions/:id/memory/short-term',
      summary:
        'Empty the short-term ring (clearShortTerm; long-term and working stay); emits memory_cleared {tier: "short_term", count}',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: MemoryClearedResponseSchema, ...errors },
    },
    async ({ params, caller }) => ({
      tier: 'short_term' as const,
      count: memoryOf(params.id, caller).clearShortTerm(),
    }),
  );
}

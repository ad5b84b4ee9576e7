import { RetentionSweeper } from './runtime/retention/retention-sweeper.js';
import { sessionIdOf, tenantIdOf } from './stores/session-key.js';
import { TenantQuotas } from './runtime/quotas/tenant-quotas.js';
import { TenantSessionBytes } from './runtime/quotas/tenant-session-bytes.js';
import { RedisTenantUsage } from './cluster/redis-tenant-usage.js';
import { sessionBytesLimit, tenantQuotasOn } from './config/session-bytes-limit.js';
import { realpath } from 'node:fs/promises';
import { Cluster as RedisCluster } from 'ioredis';
import { pino, type Logger } from 'pino';
import { loadClusterSecrets, type ClusterSecrets } from './cluster/cluster-secrets.js';
import { ForwardedHeaders } from './cluster/forwarded-header.js';
import { nodeKey, NodeRegistry } from './cluster/node-identity.js';
import { checkSharedRoots } from './cluster/shared-roots.js';
import { PeerUrls } from './cluster/peer-urls.js';
import { DEFAULT_BLOCK_MS } from './cluster/stream-follower.js';
import { RedisEventStream, streamReaderFor } from './cluster/redis-event-stream.js';
import { createRedisClient, REDIS_COMMAND_TIMEOUT_MS, waitUntilReady } from './cluster/redis-connection.js';
import type { RedisClient } from './stores/redis-client.js';
import { ReplicaAcks } from './stores/replica-acks.js';
import { RedisOwnership } from './cluster/redis-ownership.js';
import { SessionLeases } from './cluster/session-lease.js';
import { globalMcpServers, type CodeConfig } from './config/code-config.js';
import { createLocalOwnership, type SessionOwnership } from './runtime/ports/session-ownership.js';
import { McpManager } from './runtime/mcp/mcp-manager.js';
import { CodeError } from './errors.js';
import { Agent } from './runtime/live-sessions/agent.js';
import { createSystemHostEnv, type HostEnv } from './runtime/ports/host-env.js';
import { providerChatUrl } from './runtime/llm/chat-completions-url.js';
import type { LlmProvider } from './runtime/llm/llm-provider.js';
import { OpenAiProvider } from './runtime/llm/openai-provider.js';
import { TenantBudgetLedger } from './runtime/policy/budget/tenant-budget-ledger.js';
import { WebSocketHostRegistry } from './runtime/policy/host-bridge/websocket-host-registry.js';
import { SecretRedactor } from './runtime/policy/secret-redactor.js';
import { createBuiltinTools } from './runtime/tools/builtin-tools.js';
import { startSandbox, type StartedSandbox } from './runtime/sandbox/start-sandbox.js';
import { Authenticator } from './server/authenticator.js';
import { RequestForwarder } from './server/request-forwarder.js';
import { OpenApiRegistry } from './server/openapi-registry.js';
import { RuntimeMetrics, type QueueFigures } from './server/runtime-metrics.js';
import type { CheckpointStore } from './stores/checkpoint-store.js';
import { FileCheckpointStore } from './stores/file-checkpoint-store.js';
import { FileSessionStore } from './stores/file-session-store.js';
import { MemoryCheckpointStore } from './stores/memory-checkpoint-store.js';
import { RedisCheckpointStore } from './stores/redis-checkpoint-store.js';
import { RedisSessionStore } from './stores/redis-session-store.js';
import { MemorySessionStore } from './stores/memory-session-store.js';
import type { SessionStore } from './stores/session-store.js';
import { FileMemoryItemStore } from './stores/file-memory-item-store.js';
import { ProcessMemoryItemStore } from './stores/process-memory-item-store.js';
import { RedisMemoryItemStore } from './stores/redis-memory-item-store.js';
import type { MemoryStores } from './runtime/memory/memory-stores.js';
import type { SessionLogger } from './runtime/session-kernel/session-services.js';
import { removeSandboxHome } from './runtime/sandbox/remove-sandbox-home.js';

/** Every dependency of the server, built in one place. */
export interface RuntimeContext {
  readonly config: CodeConfig;
  readonly hostEnv: HostEnv;
  readonly logger: Logger;
  readonly store: SessionStore;
  readonly agent: Agent;
  /** Who owns which session (leases, home records) and, in a cluster, the shared event stream: the agent's own. */
  readonly ownership: SessionOwnership;
  readonly authenticator: Authenticator;
  readonly openapi: OpenApiRegistry;
  /** This context's Prometheus registry and metrics (GET /metrics). */
  readonly metrics: RuntimeMetrics;
  /** WebSocket clients that act as hook or budget hosts. */
  readonly hostRegistry: WebSocketHostRegistry;
  /** This node's id (random unless configured). */
  readonly nodeId: string;
  /** True on Redis: other nodes take over this node's sessions when it stops. */
  readonly clustered: boolean;
  /** The sandbox model-chosen commands run in (`bwrap`, or `none`), detected at start. */
  readonly sandbox: StartedSandbox;
  /** The secret nodes share (signed hops, SSE tickets any node accepts); required with Redis, optional alone. */
  readonly clusterSecrets: ClusterSecrets | undefined;
  /** Forwards requests for sessions other nodes own to them (cluster.peer_urls), and checks forwarded ones. */
  readonly forwarder: RequestForwarder;
  /** Called once the server listens: in a cluster, starts advertising this node at its URL. */
  onListening(url: string): Promise<void>;
  /** Release what the context opened (the Redis connections), after the agent closed. */
  dispose(): Promise<void>;
}

/** Optional replacements for tests and benchmarks. */
export interface RuntimeOverrides {
  hostEnv?: HostEnv;
  logger?: Logger;
  store?: SessionStore;
  checkpoints?: CheckpointStore;
  /** Replaces sandbox detection (tests of the no-sandbox path). */
  sandbox?: StartedSandbox;
}

async function createStore(config: CodeConfig, redis: RedisClient | undefined, cluster: Cluster | undefined): Promise<SessionStore> {
  // Saves are fenced by the owner's lease epoch: a node that lost a session can never overwrite it.
  const retentionDays = config.retention.closedSessionDays;
  if (redis) {
    return new RedisSessionStore({
      redis,
      keyPrefix: config.redisKeyPrefix,
      ...(cluster ? { fence: (key) => cluster.leases.storeFence(key), replicaAcks: cluster.replicaAcks } : {}),
      // The old key layout spans slots and never ran on a cluster: nothing to migrate there.
      legacyLayout: !(redis instanceof RedisCluster),
      ...(retentionDays !== undefined ? { closedTtlMs: Math.round(retentionDays * 24 * 60 * 60 * 1000) } : {}),
    });
  }
  if (config.storageBackend === 'memory') return new MemorySessionStore();
  const store = new FileSessionStore({ dir: config.sessionsDir ?? `${config.dataDir}/sessions` });
  try {
    await store.init();
  } catch (error) {
    throw new CodeError('SESSION_INITIALIZATION_ERROR', `file store at ${config.sessionsDir}: ${error instanceof Error ? error.message : String(error)}`, { resource: 'sessionsDir' });
  }
  return store;
}

async function createCheckpointStore(config: CodeConfig, redis: RedisClient | undefined, cluster: Cluster | undefined): Promise<CheckpointStore> {
  // Fenced like session saves: a node that lost a session cannot overwrite the checkpoint its new owner resumes.
  if (redis) {
    return new RedisCheckpointStore({ redis, keyPrefix: config.redisKeyPrefix, ...(cluster ? { fence: (key) => cluster.leases.storeFence(key), replicaAcks: cluster.replicaAcks } : {}) });
  }
  if (config.storageBackend === 'memory') return new MemoryCheckpointStore();
  const store = new FileCheckpointStore({ dir: `${config.dataDir}/checkpoints` });
  try {
    await store.init();
  } catch (error) {
    throw new CodeError('SESSION_INITIALIZATION_ERROR', `checkpoint store at ${config.dataDir}/checkpoints: ${error instanceof Error ? error.message : String(error)}`, { resource: 'dataDir' });
  }
  return store;
}

/** Long-term memory: `file` is Redis (shared by every node) or <data_dir>/memory, like the session store; `memory` is this process. */
/** The agent's and its sessions' logger, on the server's pino logger. */
function sessionLogger(logger: Logger): SessionLogger {
  return {
    persistenceFailed: (sessionId, error) => logger.error({ sessionId, err: error }, 'session autosave failed'),
    mcpLog: (sessionId, server, line) => logger.debug({ sessionId, mcp: server }, line),
  };
}

function createMemoryStores(config: CodeConfig, redis: RedisClient | undefined): MemoryStores {
  const processStore = new ProcessMemoryItemStore();
  if (redis) return { durable: new RedisMemoryItemStore(redis, config.redisKeyPrefix), process: processStore };
  if (config.storageBackend === 'memory') return { durable: processStore, process: processStore };
  return { durable: new FileMemoryItemStore(`${config.dataDir}/memory`), process: processStore };
}

interface Cluster {
  redis: RedisClient;
  reader: RedisClient;
  replicaAcks: ReplicaAcks;
  leases: SessionLeases;
  ownership: RedisOwnership;
}

/** The cluster services over Redis: session leases (fencing the store), the event stream and ownership. */
function createCluster(config: CodeConfig, redis: RedisClient, nodeId: string, logger: Logger): Cluster {
  // XREAD BLOCK holds its connection, so stream followers get their own (on a cluster: sharded subscribers);
  // its deadline allows for the block time, so a flapping Redis cannot hold shutdown either.
  const reader = streamReaderFor(redis, { commandTimeout: REDIS_COMMAND_TIMEOUT_MS + DEFAULT_BLOCK_MS });
  // Fenced writes wait for a replica when there are replicas (config redis.min_replicas_ack).
  const replicaAcks = new ReplicaAcks({ client: redis, configured: config.redis.minReplicasAck, timeoutMs: config.redis.replicaAckTimeoutMs });
  reader.on('error', (error: Error) => logger.warn({ err: error.message }, 'redis stream connection error'));
  const onError = (message: string, error: unknown) => logger.warn({ err: error instanceof Error ? error.message : String(error) }, message);
  const holder: { ownership?: RedisOwnership } = {};
  const leases = new SessionLeases({
    redis,
    keyPrefix: config.redisKeyPrefix,
    nodeId,
    ttlMs: config.cluster.leaseTtlMs,
    onLost: (sessionId) => {
      logger.warn({ sessionId }, 'session lease lost to another node; giving the session up');
      holder.ownership?.lost(sessionId);
    },
    onError: (error) => onError('session lease renewal failed', error),
    replicaAcks,
  });
  const events = new RedisEventStream({ redis: reader, writer: redis, keyPrefix: config.redisKeyPrefix, maxLen: config.limits.maxEventsPerRun, onError: (error) => onError('event stream read failed', error) });
  const ownership = new RedisOwnership({ redis, keyPrefix: config.redisKeyPrefix, nodeId, leases, events, onError });
  holder.ownership = ownership;
  return { redis, reader, replicaAcks, leases, ownership };
}

async function canonicalRoots(roots: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const root of roots) {
    try {
      out.push(await realpath(root));
    } catch {
      throw new CodeError('SESSION_INITIALIZATION_ERROR', `workspace root ${root} does not exist`, { resource: 'workspaceRoots' });
    }
  }
  return out;
}

/** Build the runtime context: logger, store, providers, tools, agent and authenticator. */
export async function createRuntimeContext(config: CodeConfig, overrides: RuntimeOverrides = {}): Promise<RuntimeContext> {
  const logger = overrides.logger ?? pino({ level: config.logLevel });
  const clusterSecrets = loadClusterSecrets(config.cluster);
  const hostEnv = overrides.hostEnv ?? createSystemHostEnv();
  // One Redis client (or Cluster client) for the stores and cluster services.
  const redis = createRedisClient(config, logger);
  const nodeId = config.nodeId ?? hostEnv.newId('node');
  const cluster = redis ? createCluster(config, redis, nodeId, logger) : undefined;
  if (redis && cluster) {
    // A Redis Cluster fails commands while it is not ready: wait for it (both clients) before anything uses it.
    try {
      const seeds = config.redis.cluster?.join(',') ?? '';
      await Promise.all([waitUntilReady(redis, REDIS_COMMAND_TIMEOUT_MS, seeds), waitUntilReady(cluster.reader, REDIS_COMMAND_TIMEOUT_MS, seeds)]);
    } catch (error) {
      redis.disconnect();
      cluster.reader.disconnect();
      throw error;
    }
  }
  let workspaceRoots: string[];
  try {
    workspaceRoots = await canonicalRoots(config.workspaceRoots ?? [process.cwd()]);
    // Nodes must share their workspace roots (sessions move between nodes and reopen their workspace by path).
    if (cluster) await checkSharedRoots({ redis: cluster.redis, keyPrefix: config.redisKeyPrefix, roots: workspaceRoots });
  } catch (error) {
    redis?.disconnect();
    cluster?.reader.disconnect();
    throw error;
  }
  const store = overrides.store ?? (await createStore(config, redis, cluster));
  const checkpoints = overrides.checkpoints ?? (await createCheckpointStore(config, redis, cluster));
  // Before anything else starts: with sandbox.mode "required", no working sandbox means no server.
  const sandbox = overrides.sandbox ?? (await startSandbox(config, logger));
  const mcp = new McpManager({ source: 'global', now: () => hostEnv.now(), onLog: (server, line) => logger.info({ mcp: server }, line) });
  // Global servers that cannot start yet stay registered with their error (GET .../mcp shows it); refresh retries.
  await Promise.all(globalMcpServers(config).map((server) => mcp.register(server)));
  const hostRegistry = new WebSocketHostRegistry({ newRequestId: () => hostEnv.newId('req') });
  // Read at scrape time only, after the agent below exists.
  // Tenant quotas bound tenants: on with API tokens, or when configured; a tokenless loopback server (one
  // local user, the benchmarks) runs unthrottled. The session bytes of a tenant likewise, or when set.
  const quotas = tenantQuotasOn(config) ? new TenantQuotas({ quotas: config.tenantQuotas, defaultQuota: config.defaultTenantQuota, now: () => Date.now() }) : undefined;
  // On Redis the quotas count every live node's usage (entries that expire with cluster.node_ttl_ms).
  const clusterUsage =
    quotas && cluster
      ? new RedisTenantUsage({ redis: cluster.redis, keyPrefix: config.redisKeyPrefix, nodeId, ttlMs: config.cluster.nodeTtlMs, local: (tenantId) => quotas.entryOf(tenantId), tenants: () => quotas.tenantIds(), onError: (error) => logger.warn({ err: String(error) }, 'tenant quota sync failed') })
      : undefined;
  if (quotas && clusterUsage) {
    quotas.attachCluster(clusterUsage);
    clusterUsage.start();
  }
  const sessionBytesMax = sessionBytesLimit(config);
  const sessionBytes = sessionBytesMax !== undefined ? new TenantSessionBytes(sessionBytesMax) : undefined;
  const metrics = new RuntimeMetrics({
    liveSessions: (): number => agent.sessionCount,
    queues: (): Iterable<QueueFigures> => agent.queues(),
    tenantQuotas: () => quotas?.snapshot() ?? [],
    tenantSessionBytes: () => sessionBytes?.snapshot() ?? [],
  });
  const providers = new Map<string, LlmProvider>();
  const providerFor = (name: string): LlmProvider => {
    let provider = providers.get(name);
    if (!provider) {
      const settings = config.providers[name];
      if (!settings) throw new Error(`provider ${name} is not configured`);
      provider = new OpenAiProvider({ apiKey: settings.apiKey, chatUrl: providerChatUrl(settings), headers: settings.headers, timeoutMs: settings.timeoutMs, maxRetries: settings.maxRetries });
      providers.set(name, provider);
    }
    return provider;
  };
  const agentOwnership = cluster?.ownership ?? createLocalOwnership(nodeId);
  const agent = new Agent({
    config,
    store,
    hostEnv,
    tools: createBuiltinTools(),
    workspaceRoots,
    providerFor,
    checkpoints,
    memoryStores: createMemoryStores(config, redis),
    sandbox,
    ownership: agentOwnership,
    mcp,
    logger: sessionLogger(logger),
    governance: {
      // Configured secrets are redacted from tool output wherever they appear.
      redactor: new SecretRedactor([
        ...Object.values(config.providers).flatMap((p) => (p.apiKey ? [p.apiKey] : [])),
        ...config.apiTokens.flatMap((t) => (t.token ? [t.token] : [])),
        ...(clusterSecrets?.values ?? []),
      ]),
      hostRegistry,
      tenantLedger: new TenantBudgetLedger({ limits: (tenantId) => config.tenantBudgets[tenantId], now: () => hostEnv.now() }),
      configHooks: config.hooks,
      defaultBudget: config.defaultBudget,
      budgetHost: config.budgetHost,
      onHookError: (sessionId, failure) => logger.warn({ sessionId, hook: failure }, 'hook failed'),
    },
    onSessionEvent: metrics.observeEvent,
    ...(quotas ? { quotas } : {}),
    ...(sessionBytes ? { sessionBytes } : {}),
  });
  // Retention of closed sessions (off unless configured): a sweep at start and every hour.
  const retentionDays = config.retention.closedSessionDays;
  const sweeper =
    retentionDays === undefined
      ? undefined
      : new RetentionSweeper({
          store,
          checkpoints,
          ownership: agentOwnership,
          closedSessionDays: retentionDays,
          now: () => hostEnv.now(),
          isLive: (key) => agent.isLive(key),
          onPurged: (key) => {
            quotas?.recordStored(tenantIdOf(key), sessionIdOf(key), 0);
            void removeSandboxHome(sandbox, quotas, key);
          },
          onError: (error) => logger.warn({ err: String(error) }, 'retention sweep failed for a session'),
        });
  sweeper?.start();
  const forwarder = new RequestForwarder({
    peers: new PeerUrls(config.cluster.peerUrls),
    headers: clusterSecrets ? new ForwardedHeaders(clusterSecrets, nodeId) : undefined,
    // A forward in flight ends when its owner's advertisement expires (dead, partitioned or hung).
    ...(cluster ? { ownerAlive: async (id: string) => (await cluster.redis.exists(nodeKey(config.redisKeyPrefix, id))) === 1 } : {}),
  });
  if (cluster && config.cluster.peerUrls.length === 0) {
    logger.warn('cluster.peer_urls is empty (A3S_CLUSTER_PEER_URLS): requests for sessions another node owns answer 421 SESSION_OWNED_ELSEWHERE instead of being forwarded there');
  }
  return { config, hostEnv, logger, store, agent, authenticator: new Authenticator(config.apiTokens), openapi: new OpenApiRegistry(),
    metrics,
    hostRegistry,
    nodeId,
    clustered: cluster !== undefined,
    ownership: agentOwnership,
    sandbox,
    clusterSecrets,
    forwarder,
    onListening: async (url: string) => {
      if (!cluster) return;
      await cluster.ownership.advertise(new NodeRegistry({ redis: cluster.redis, keyPrefix: config.redisKeyPrefix, nodeId, advertiseUrl: config.advertiseUrl ?? url, ttlMs: config.cluster.nodeTtlMs, onError: (error) => logger.warn({ err: String(error) }, 'node heartbeat failed') }));
    },
    dispose: async () => {
      await sweeper?.stop();
      await clusterUsage?.stop();
      await forwarder.close().catch(() => undefined);
      metrics.close();
      await sandbox.dispose();
      await Promise.all([...providers.values()].map((provider) => provider.close?.()));
      if (cluster) await cluster.reader.quit().catch(() => cluster.reader.disconnect());
      if (redis) await redis.quit().catch(() => redis.disconnect());
    },
  };
}

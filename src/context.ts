import { RetentionSweeper } from './runtime/retention/retention-sweeper.js';
import { sessionIdOf, tenantIdOf } from './stores/session-key.js';
import { TenantQuotas } from './runtime/quotas/tenant-quotas.js';
import { TenantSessionBytes } from './runtime/quotas/tenant-session-bytes.js';
import { RedisTenantUsage } from './cluster/redis-tenant-usage.js';
import { sessionBytesLimit, tenantQuotasOn } from './config/session-bytes-limit.js';
import { realpath } from 'node:fs/promises';
import { pino, type Logger } from 'pino';
import { loadClusterSecrets, type ClusterSecrets } from './cluster/cluster-secrets.js';
import { ForwardedHeaders } from './cluster/forwarded-header.js';
import { nodeKey, NodeRegistry } from './cluster/node-identity.js';
import { checkSharedRoots } from './cluster/shared-roots.js';
import { PeerUrls } from './cluster/peer-urls.js';
import { createRedisClient, REDIS_COMMAND_TIMEOUT_MS, waitUntilReady } from './cluster/redis-connection.js';
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
import type { SessionStore } from './stores/session-store.js';
import { createChangeCapture, createChangeSetStore, resolveChangesDir } from './create-change-capture.js';
import { createWebhookStore } from './create-webhook-store.js';
import { WebhookDeliveries } from './runtime/webhooks/webhook-deliveries.js';
import { createAttachmentStore, createCheckpointStore, createMemoryStores, createStore } from './create-store.js';
import { CountedAttachmentStore } from './runtime/attachments/counted-attachment-store.js';
import { SessionAttachments } from './runtime/attachments/session-attachments.js';
import { createRuntimeCluster } from './create-runtime-cluster.js';
import type { SessionLogger } from './runtime/session-kernel/session-services.js';
import type { Telemetry } from './runtime/ports/telemetry.js';
import { startTelemetry } from './telemetry/start-telemetry.js';
import { traceRedis } from './telemetry/traced-redis.js';
import { traceSandbox } from './telemetry/traced-sandbox.js';
import { packageVersion } from './package-version.js';
import { removeSandboxHome } from './runtime/sandbox/remove-sandbox-home.js';
import { createSchedules } from './create-schedules.js';
import type { Schedules } from './runtime/schedules/schedules.js';
import type { ScheduleClock } from './runtime/schedules/schedule-clock.js';

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
  /** The sessions' attachments (uploads, the parts of runs) over the attachment store. */
  readonly attachments: SessionAttachments;
  /** Called once the server listens: in a cluster, starts advertising this node at its URL. */
  onListening(url: string): Promise<void>;
  /** Schedules (the /v1/schedules routes) and the scheduler firing their ticks once the server listens. */
  readonly schedules: Schedules;
  /** Traces (OTEL_* variables; docs/operations.md "Traces"); absent when none are exported. */
  readonly telemetry: Telemetry | undefined;
  /** Run webhooks: checks, the delivery log, and the attempts (docs/webhooks.md). */
  readonly webhooks: WebhookDeliveries;
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
  /** Replaces the schedules' wall clock and timers (tests of ticks). */
  scheduleClock?: ScheduleClock;
}

/** The agent's and its sessions' logger, on the server's pino logger. */
function sessionLogger(logger: Logger): SessionLogger {
  return {
    persistenceFailed: (sessionId, error) => logger.error({ sessionId, err: error }, 'session autosave failed'),
    mcpLog: (sessionId, server, line) => logger.debug({ sessionId, mcp: server }, line),
  };
}

async function canonicalRoots(roots: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const root of roots) {
    try {
      out.push(await realpath(root));
    } catch {
      throw new CodeError('SESSION_INITIALIZATION_ERROR', `workspace root ${root} does not exist`, {
        resource: 'workspaceRoots',
      });
    }
  }
  return out;
}

/** Build the runtime context: logger, store, providers, tools, agent and authenticator. */
export async function createRuntimeContext(
  config: CodeConfig,
  overrides: RuntimeOverrides = {},
): Promise<RuntimeContext> {
  const logger = overrides.logger ?? pino({ level: config.logLevel });
  const clusterSecrets = loadClusterSecrets(config.cluster);
  const hostEnv = overrides.hostEnv ?? createSystemHostEnv();
  // Configured secrets are redacted from tool output (and from traces' content) wherever they appear.
  const redactor = new SecretRedactor([
    ...Object.values(config.providers).flatMap((p) => (p.apiKey ? [p.apiKey] : [])),
    ...config.apiTokens.flatMap((t) => (t.token ? [t.token] : [])),
    ...(clusterSecrets?.values ?? []),
    ...Object.values(config.webhooks.secrets).flat(),
  ]);
  // Started before Redis, the sandbox and the agent, so their work in a run is traced from the first; the SDK is
  // imported only when asked for.
  const telemetry = await startTelemetry(
    process.env,
    packageVersion(),
    config.telemetry.captureContent ? { redact: (text) => redactor.redact(text).text } : undefined,
  );
  // One Redis client (or Cluster client) for the stores and cluster services.
  const redis = createRedisClient(config, logger);
  if (redis && telemetry) traceRedis(redis, telemetry);
  const nodeId = config.nodeId ?? hostEnv.newId('node');
  const cluster = redis ? createRuntimeCluster(config, redis, nodeId, logger) : undefined;
  if (redis && cluster) {
    // A Redis Cluster fails commands while it is not ready: wait for it (both clients) before anything uses it.
    try {
      const seeds = config.redis.cluster?.join(',') ?? '';
      await Promise.all([
        waitUntilReady(redis, REDIS_COMMAND_TIMEOUT_MS, seeds),
        waitUntilReady(cluster.reader, REDIS_COMMAND_TIMEOUT_MS, seeds),
      ]);
    } catch (error) {
      redis.disconnect();
      cluster.reader.disconnect();
      throw error;
    }
  }
  let workspaceRoots: string[];
  let changesDir: string;
  try {
    workspaceRoots = await canonicalRoots(config.workspaceRoots ?? [process.cwd()]);
    changesDir = await resolveChangesDir(config, workspaceRoots);
    // Nodes must share their workspace roots (sessions move between nodes and reopen their workspace by path),
    // and a changes_dir, when set, is the cluster's too (another node reads the trees after a takeover).
    if (cluster) {
      await checkSharedRoots({ redis: cluster.redis, keyPrefix: config.redisKeyPrefix, roots: workspaceRoots });
      if (config.changesDir !== undefined)
        await checkSharedRoots({
          redis: cluster.redis,
          keyPrefix: config.redisKeyPrefix,
          roots: [changesDir],
          label: 'changes_dir',
          resource: 'changesDir',
        });
    }
  } catch (error) {
    redis?.disconnect();
    cluster?.reader.disconnect();
    throw error;
  }
  const store = overrides.store ?? (await createStore(config, redis, cluster));
  const checkpoints = overrides.checkpoints ?? (await createCheckpointStore(config, redis, cluster));
  // Before anything else starts: with sandbox.mode "required", no working sandbox means no server.
  const started = overrides.sandbox ?? (await startSandbox(config, logger));
  const sandbox = telemetry ? { ...started, sandbox: traceSandbox(started.sandbox, telemetry) } : started;
  const mcp = new McpManager({
    source: 'global',
    now: () => hostEnv.now(),
    onLog: (server, line) => logger.info({ mcp: server }, line),
  });
  // Global servers that cannot start yet stay registered with their error (GET .../mcp shows it); refresh retries.
  await Promise.all(globalMcpServers(config).map((server) => mcp.register(server)));
  const hostRegistry = new WebSocketHostRegistry({ newRequestId: () => hostEnv.newId('req') });
  // Read at scrape time only, after the agent below exists.
  // Tenant quotas bound tenants: on with API tokens, or when configured; a tokenless loopback server (one
  // local user, the benchmarks) runs unthrottled. The session bytes of a tenant likewise, or when set.
  const quotas = tenantQuotasOn(config)
    ? new TenantQuotas({ quotas: config.tenantQuotas, defaultQuota: config.defaultTenantQuota, now: () => Date.now() })
    : undefined;
  // Attachments on the file and Redis stores count in the tenant's stored bytes (process memory is no storage).
  const attachmentStore = createAttachmentStore(config, redis);
  const countedAttachments =
    quotas && attachmentStore.kind !== 'memory' ? new CountedAttachmentStore(attachmentStore, quotas) : undefined;
  const attachments = new SessionAttachments(countedAttachments ?? attachmentStore, config.limits, countedAttachments);
  // On Redis the quotas count every live node's usage (entries that expire with cluster.node_ttl_ms).
  const clusterUsage =
    quotas && cluster
      ? new RedisTenantUsage({
          redis: cluster.redis,
          keyPrefix: config.redisKeyPrefix,
          nodeId,
          ttlMs: config.cluster.nodeTtlMs,
          local: (tenantId) => quotas.entryOf(tenantId),
          tenants: () => quotas.tenantIds(),
          onError: (error) => logger.warn({ err: String(error) }, 'tenant quota sync failed'),
        })
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
      provider = new OpenAiProvider({
        apiKey: settings.apiKey,
        chatUrl: providerChatUrl(settings),
        headers: settings.headers,
        timeoutMs: settings.timeoutMs,
        maxRetries: settings.maxRetries,
      });
      providers.set(name, provider);
    }
    return provider;
  };
  const changeSets = createChangeSetStore(config, redis);
  const changes = createChangeCapture(config, changesDir, sandbox, quotas, hostEnv, changeSets);
  const webhooks = new WebhookDeliveries({
    config: config.webhooks,
    store: createWebhookStore(config, redis),
    nodeId,
    now: () => hostEnv.now(),
    changeSets,
    onError: (what, error) => logger.warn({ err: String(error) }, what),
    redact: (text) => redactor.redact(text).text,
  });
  const agentOwnership = cluster?.ownership ?? createLocalOwnership(nodeId);
  const agent = new Agent({
    config,
    store,
    hostEnv,
    tools: createBuiltinTools(),
    workspaceRoots,
    providerFor,
    checkpoints,
    attachments: attachments.store,
    toolImages: attachments,
    memoryStores: createMemoryStores(config, redis),
    sandbox,
    changes,
    ownership: agentOwnership,
    mcp,
    logger: sessionLogger(logger),
    governance: {
      redactor,
      hostRegistry,
      tenantLedger: new TenantBudgetLedger({
        limits: (tenantId) => config.tenantBudgets[tenantId],
        now: () => hostEnv.now(),
      }),
      configHooks: config.hooks,
      defaultBudget: config.defaultBudget,
      budgetHost: config.budgetHost,
      onHookError: (sessionId, failure) => logger.warn({ sessionId, hook: failure }, 'hook failed'),
    },
    onSessionEvent: metrics.observeEvent,
    webhooks,
    ...(telemetry ? { telemetry } : {}),
    ...(quotas ? { quotas } : {}),
    ...(sessionBytes ? { sessionBytes } : {}),
  });
  const authenticator = new Authenticator(config.apiTokens);
  const schedules = await createSchedules({
    config,
    redis,
    agent,
    grants: authenticator,
    hostEnv,
    nodeId,
    logger,
    ...(overrides.scheduleClock ? { clock: overrides.scheduleClock } : {}),
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
            void attachments.store.deleteSession(key).catch(() => undefined);
            void removeSandboxHome(sandbox, quotas, key);
            void changes.removeSession(key);
            void webhooks.removeSession(key).catch(() => undefined);
          },
          onError: (error) => logger.warn({ err: String(error) }, 'retention sweep failed for a session'),
        });
  sweeper?.start();
  webhooks.start();
  const forwarder = new RequestForwarder({
    peers: new PeerUrls(config.cluster.peerUrls),
    headers: clusterSecrets ? new ForwardedHeaders(clusterSecrets, nodeId) : undefined,
    // A forward in flight ends when its owner's advertisement expires (dead, partitioned or hung).
    ...(cluster
      ? { ownerAlive: async (id: string) => (await cluster.redis.exists(nodeKey(config.redisKeyPrefix, id))) === 1 }
      : {}),
  });
  if (cluster && config.cluster.peerUrls.length === 0) {
    logger.warn(
      'cluster.peer_urls is empty (A3S_CLUSTER_PEER_URLS): requests for sessions another node owns answer 421 SESSION_OWNED_ELSEWHERE instead of being forwarded there',
    );
  }
  return {
    config,
    hostEnv,
    logger,
    store,
    agent,
    authenticator,
    openapi: new OpenApiRegistry(),
    metrics,
    hostRegistry,
    nodeId,
    clustered: cluster !== undefined,
    ownership: agentOwnership,
    sandbox,
    clusterSecrets,
    forwarder,
    attachments,
    telemetry,
    webhooks,
    schedules,
    onListening: async (url: string) => {
      schedules.start();
      if (!cluster) return;
      await cluster.ownership.advertise(
        new NodeRegistry({
          redis: cluster.redis,
          keyPrefix: config.redisKeyPrefix,
          nodeId,
          advertiseUrl: config.advertiseUrl ?? url,
          ttlMs: config.cluster.nodeTtlMs,
          onError: (error) => logger.warn({ err: String(error) }, 'node heartbeat failed'),
        }),
      );
    },
    dispose: async () => {
      webhooks.stop();
      await schedules.close().catch(() => undefined);
      await sweeper?.stop();
      await clusterUsage?.stop();
      await forwarder.close().catch(() => undefined);
      metrics.close();
      await sandbox.dispose();
      await Promise.all([...providers.values()].map((provider) => provider.close?.()));
      if (cluster) await cluster.reader.quit().catch(() => cluster.reader.disconnect());
      if (redis) await redis.quit().catch(() => redis.disconnect());
      // Last: the spans of the runs the agent drained are exported before the process goes.
      await telemetry?.shutdown().catch(() => undefined);
    },
  };
}

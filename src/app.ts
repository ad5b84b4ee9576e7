import websocket from '@fastify/websocket';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { RuntimeContext } from './context.js';
import { registerAgentRoutes } from './routes/agents.js';
import { registerCommandRoutes } from './routes/commands.js';
import { registerCompactRoutes } from './routes/compact.js';
import { registerSkillRoutes } from './routes/skills.js';
import { registerTaskRoutes } from './routes/tasks.js';
import { registerBudgetHostRoutes } from './routes/budget-host.js';
import { registerClusterEventRoutes } from './routes/cluster-events.js';
import { registerConfirmationRoutes } from './routes/confirmations.js';
import { registerQuestionRoutes } from './routes/questions.js';
import { registerRunControlRoutes } from './routes/run-control.js';
import { registerConsoleRoutes } from './routes/console.js';
import { registerEventsWebSocket } from './routes/events-ws.js';
import { registerAuthTicketRoutes } from './routes/auth-ticket.js';
import { registerAguiRoutes } from './routes/agui.js';
import { registerAcpRoute } from './routes/acp.js';
import { SERVICE_RESTART_CLOSE, SocketRegistry } from './server/socket-registry.js';
import { WS_CLOSE } from './protocol/ws-messages.js';
import { registerHookRoutes } from './routes/hooks.js';
import { registerMcpRoutes } from './routes/mcp.js';
import { registerMemoryRoutes } from './routes/memory.js';
import { registerQueueRoutes } from './routes/queue.js';
import { registerMetricsRoutes } from './routes/metrics.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerRunRoutes } from './routes/runs.js';
import { registerChangeRoutes } from './routes/changes.js';
import { registerWebhookRoutes } from './routes/webhooks.js';
import { registerRevertRoutes } from './routes/revert.js';
import { registerAttachmentRoutes } from './routes/attachments.js';
import { registerSessionForkRoutes } from './routes/session-fork.js';
import { registerSessionRoutes } from './routes/sessions.js';
import { registerScheduleRoutes } from './routes/schedules.js';
import { registerToolRoutes } from './routes/tools.js';
import { registerVerificationRoutes } from './routes/verifications.js';
import { installBrowserGuard } from './server/browser-guard.js';
import { installErrorHandler } from './server/error-handler.js';
import { TrustedProxies } from './server/client-address.js';
import { clientFaultLogFor } from './server/client-fault-log.js';
import { ConnectionGuard } from './server/connection-guard.js';
import { httpServerOptions } from './server/http-server-options.js';
import { installRequestTraces } from './server/request-traces.js';
import { websocketErrorHandler } from './server/websocket-errors.js';

/** The Fastify app plus the handles shutdown needs. */
export interface BuiltApp {
  app: FastifyInstance;
  sockets: SocketRegistry;
}

/** Build the Fastify app for a runtime context; never listens (callers decide). */
export async function buildApp(ctx: RuntimeContext): Promise<BuiltApp> {
  const faults = clientFaultLogFor(ctx.logger as FastifyBaseLogger);
  const app = Fastify({ loggerInstance: ctx.logger as FastifyBaseLogger, ...httpServerOptions(ctx.config, faults) });
  const sockets = new SocketRegistry();
  installErrorHandler(app, { routes: () => ctx.openapi.operations, faults });
  await app.register(websocket, { options: { maxPayload: 64 * 1024 }, errorHandler: websocketErrorHandler(faults) });
  // Timeouts and the per-address connection cap, before the Host/Origin check (after the websocket hook).
  const connections = new ConnectionGuard(ctx.config.limits, new TrustedProxies(ctx.config.trustProxy), faults);
  connections.install(app);
  // Before any route, after the websocket plugin's own onRequest hook (which marks upgrades, so a refused
  // upgrade's socket is destroyed after the 403): a refused Host or Origin never reaches a handler or upgrades.
  installBrowserGuard(app, ctx.config);
  // A span per request when traces are exported (the SDK is loaded only then).
  installRequestTraces(app, ctx.telemetry);
  // A forwarded request's A3S-Forwarded is checked before anything else believes it (a bad one is 401).
  // Its connection then counts for the client the signature names (limits.max_connections_per_address).
  app.addHook('onRequest', (request, reply, done) => {
    try {
      const hop = ctx.forwarder.checkIncoming(request);
      if (hop) connections.attributeForwarded(request, reply, hop.clientAddress);
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  });
  app.addHook('preClose', async () => {
    ctx.agent.beginShutdown();
    // In a cluster the sessions move to another node: 1012 (service restart) says reconnect, through any node.
    sockets.closeAll('server shutting down', ctx.clustered ? SERVICE_RESTART_CLOSE : WS_CLOSE.goingAway);
    ctx.forwarder.closeAll();
  });
  // First: its onResponse hook counts the requests of every route.
  registerMetricsRoutes(app, ctx, sockets);
  registerHealthRoutes(app, ctx);
  registerSessionRoutes(app, ctx);
  registerSessionForkRoutes(app, ctx);
  registerRunRoutes(app, ctx);
  registerChangeRoutes(app, ctx);
  registerWebhookRoutes(app, ctx);
  registerRevertRoutes(app, ctx);
  registerAttachmentRoutes(app, ctx, ctx.attachments);
  registerToolRoutes(app, ctx);
  registerConfirmationRoutes(app, ctx);
  registerQuestionRoutes(app, ctx);
  registerRunControlRoutes(app, ctx);
  registerMcpRoutes(app, ctx);
  registerAgentRoutes(app, ctx);
  registerSkillRoutes(app, ctx);
  registerCommandRoutes(app, ctx);
  registerCompactRoutes(app, ctx);
  registerTaskRoutes(app, ctx);
  registerMemoryRoutes(app, ctx, (id, caller) => ctx.agent.getSession(id, caller));
  registerQueueRoutes(app, ctx, (id, caller) => ctx.agent.getSession(id, caller));
  registerClusterEventRoutes(app, ctx);
  registerBudgetHostRoutes(app, ctx);
  registerVerificationRoutes(app, ctx, { getSession: (id, caller) => ctx.agent.getSession(id, caller) });
  registerHookRoutes(app, ctx, (id, caller) => ctx.agent.getSession(id, caller).governance.hooks);
  registerEventsWebSocket(app, ctx, sockets);
  registerAuthTicketRoutes(app, ctx);
  registerAguiRoutes(app, ctx, sockets);
  registerAcpRoute(app, ctx, sockets);
  registerScheduleRoutes(app, ctx);
  registerConsoleRoutes(app, ctx);
  return { app, sockets };
}

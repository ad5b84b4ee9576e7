import { pinSessionWorkspace } from '../workspace/pin-session-workspace.js';
import { usesRedis, type CodeConfig } from '../../config/code-config.js';
import {
  DEFAULT_CONTEXT_TOKENS,
  modelContextTokens,
  modelRequestDefaults,
} from '../../config/model-request-defaults.js';
import { CodeError } from '../../errors.js';
import { ConfirmationPolicySchema } from '../../protocol/governance.js';
import type { SessionOptions } from '../../protocol/session-options.js';
import { UNSUPPORTED_OPTION_REASONS, unsupportedOptions } from '../../protocol/unsupported-session-options.js';
import { BUILTIN_DEFAULT_POLICY, policyProblems } from '../policy/permission-policy.js';
import { hasScope, type Caller } from '../ports/caller.js';
import type { HostEnv } from '../ports/host-env.js';
import type { LlmProvider } from '../llm/llm-provider.js';
import type { ResolvedModel } from '../invocation/llm-invoker.js';
import { assertOutboundUrl } from '../outbound/assert-outbound-url.js';
import { checkRunWebhook } from '../webhooks/check-run-webhook.js';
import { assertCommandEnv } from '../sandbox/command-env.js';
import { buildSystemPrompt } from '../prompt/system-prompt.js';
import { agentBounds } from '../agent-definitions/agent-definition.js';
import { resolveSessionAgents } from '../agent-definitions/resolve-session-agents.js';
import { mayAutoApprove } from '../agent-definitions/worker-agent.js';
import { resolveSessionSkills } from '../skills/resolve-session-skills.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import { resolveRetention } from './resolve-retention.js';
import type { WorkspaceContextCache } from './workspace-context-cache.js';

/** What the builder needs besides the options. */
export interface SessionBuilderDeps {
  config: CodeConfig;
  hostEnv: HostEnv;
  /** The provider client for a configured provider name (cached by the caller). */
  providerFor(name: string): LlmProvider;
  /** Resolves workspaces inside the canonical roots (with tenants split: the tenant's own space) and loads their AGENTS.md (briefly cached). */
  workspaceContext: WorkspaceContextCache;
}

const DEFAULT_CONFIRMATION_POLICY = ConfirmationPolicySchema.parse({});
/** The seed's autoCompactThreshold: compaction when the context is 80% full. */
const DEFAULT_AUTO_COMPACT_THRESHOLD = 0.8;

function configError(field: string, message: string): CodeError {
  return new CodeError('SESSION_CONFIGURATION_ERROR', `${field}: ${message}`, { field });
}

/** A `provider/model` id checked against the configured providers, with the model's request defaults. */
function chooseModel(config: CodeConfig, modelId: string, field: string, temperature: number | undefined) {
  const slash = modelId.indexOf('/');
  const providerName = modelId.slice(0, slash);
  const modelName = modelId.slice(slash + 1);
  const providerConfig = config.providers[providerName];
  if (!providerConfig) {
    const known = Object.keys(config.providers);
    throw configError(
      field,
      `provider "${providerName}" is not configured (configured: ${known.length ? known.join(', ') : 'none'})`,
    );
  }
  const modelConfig = providerConfig.models[modelName];
  return {
    modelId,
    providerName,
    modelName,
    requestDefaults: modelRequestDefaults(modelConfig, temperature),
    contextTokens: modelContextTokens(modelConfig),
    reasoning: modelConfig?.reasoning === true,
    acceptsImages: modelConfig?.modalities?.input?.includes('image') === true,
  };
}

/** A `provider/model` id as the model a session (or a child of one) runs on, with its provider client. */
export function resolveModel(
  config: CodeConfig,
  modelId: string,
  field: string,
  temperature: number | undefined,
  providerFor: (name: string) => LlmProvider,
): ResolvedModel {
  const { providerName, modelName, requestDefaults, contextTokens, reasoning, acceptsImages } = chooseModel(
    config,
    modelId,
    field,
    temperature,
  );
  let provider: LlmProvider;
  try {
    provider = providerFor(providerName);
  } catch (error) {
    throw new CodeError(
      'SESSION_INITIALIZATION_ERROR',
      `provider ${providerName}: ${error instanceof Error ? error.message : String(error)}`,
      { resource: `provider:${providerName}` },
    );
  }
  // The provider is called with the model key; a model block's `name` is a display name only.
  return {
    id: modelId,
    providerName,
    modelName,
    provider,
    ...requestDefaults,
    ...(contextTokens !== undefined ? { contextTokens } : {}),
    ...(reasoning ? { reasoning } : {}),
    ...(acceptsImages ? { acceptsImages } : {}),
  };
}

/** What a restored session keeps from its creation, whoever restores it. */
export interface RestoredGovernance {
  /** The creator gave its own permission policy without host_direct: the operator's policy bounds it. */
  policyBounded: boolean;
  /** The creator had host_direct: webhook URLs in the options (hooks, budgetHost) may name private addresses (absent: false). */
  outboundPrivate?: boolean;
  /** The creator had host_direct: without a working sandbox its commands run on the host (absent: refused). */
  hostCommands?: boolean;
  /** The workspace's identity as last pinned (absent in snapshots older than the pin). */
  workspacePin?: { readonly dev: string; readonly ino: string };
}

/**
 * The checks of what a caller's scopes allow it to ask for, made when a session is created and, for the options a
 * `resume: true` adds, with the resuming caller: `auto_approve`, `securityProvider "none"` and `sandboxNetwork
 * "allowed"` need host_direct (403 naming the field), and webhook URLs (hooks, budgetHost) name no private address
 * unless host_direct or config outbound.allow_private_networks allows it. Stdio MCP servers are checked where they
 * are attached (attachInheritedMcp).
 */
export async function assertCallerGrants(options: SessionOptions, caller: Caller, config: CodeConfig): Promise<void> {
  // auto_approve turns every "ask" into "allow" after a timeout: a weakening only host_direct callers choose.
  if (
    options.confirmationPolicy?.timeoutAction === 'auto_approve' &&
    config.defaultConfirmationPolicy?.timeoutAction !== 'auto_approve' &&
    !hasScope(caller, 'host_direct')
  ) {
    throw new CodeError(
      'FORBIDDEN',
      'confirmationPolicy.timeoutAction "auto_approve" needs the host_direct scope (it lets calls run without a human); use "reject", or a host_direct token',
      {
        field: 'confirmationPolicy.timeoutAction',
        scope: 'host_direct',
      },
    );
  }
  // Turning secret redaction off lets tool output show secrets to the model and to every event subscriber.
  if (options.securityProvider?.type === 'none' && !hasScope(caller, 'host_direct')) {
    throw new CodeError(
      'FORBIDDEN',
      'securityProvider.type "none" needs the host_direct scope (it turns secret redaction of tool output off); use "default", or a host_direct token',
      {
        field: 'securityProvider.type',
        scope: 'host_direct',
      },
    );
  }
  const allowPrivate = hasScope(caller, 'host_direct') || config.outbound.allowPrivateNetworks;
  for (const [index, hook] of (options.hooks ?? []).entries())
    await assertOutboundUrl(hook.endpoint.url, `hooks.${index}.endpoint.url`, allowPrivate);
  if (options.budgetHost) await assertOutboundUrl(options.budgetHost.url, 'budgetHost.url', allowPrivate);
  if (options.webhook)
    await checkRunWebhook(
      options.webhook,
      config.webhooks,
      options.tenantId ?? caller.tenantId,
      allowPrivate,
      'webhook',
    );
  // Network for contained commands: the operator's config, or a host_direct caller; never a tenant alone.
  if (
    options.sandboxNetwork === 'allowed' &&
    config.sandbox.network !== 'allowed' &&
    !hasScope(caller, 'host_direct')
  ) {
    throw new CodeError(
      'FORBIDDEN',
      'sandboxNetwork "allowed" needs the host_direct scope (it shares the host\'s network, loopback services included, with every command); use "none", or a host_direct token',
      {
        field: 'sandboxNetwork',
        scope: 'host_direct',
      },
    );
  }
}

/**
 * Merge SessionOptions with CodeConfig, reject unsupported options and conflicts, initialise async
 * resources (workspace, AGENTS.md, provider) and yield one ResolvedSessionConfig.
 */
export async function buildSessionConfig(
  options: SessionOptions,
  caller: Caller,
  deps: SessionBuilderDeps,
  restored?: RestoredGovernance,
): Promise<ResolvedSessionConfig> {
  const unsupported = unsupportedOptions(options);
  if (unsupported.length > 0) {
    const list = unsupported.map((name) => `"${name}"`).join(', ');
    const reasons = Object.fromEntries(
      unsupported.flatMap((name) =>
        UNSUPPORTED_OPTION_REASONS[name] ? [[name, UNSUPPORTED_OPTION_REASONS[name]]] : [],
      ),
    );
    const why = Object.entries(reasons)
      .map(([name, reason]) => `; ${name}: ${reason}`)
      .join('');
    throw new CodeError(
      'UNSUPPORTED_OPTION',
      `${unsupported.join(', ')}: ${unsupported.length === 1 ? 'this option asks' : 'these options ask'} for a capability this server does not implement yet; remove ${list} from the request (or give a value that asks for nothing, such as false, "disabled" or [])${why}`,
      {
        field: unsupported[0],
        options: unsupported,
        ...(Object.keys(reasons).length > 0 ? { reasons } : {}),
      },
    );
  }
  // The seed never substitutes a store: "file" on a server without a durable one is refused, not downgraded.
  // A session restored within this process (passivated) was admitted when it was created.
  if (
    restored === undefined &&
    options.sessionStore?.type === 'file' &&
    deps.config.storageBackend === 'memory' &&
    !usesRedis(deps.config)
  ) {
    throw new CodeError(
      'UNSUPPORTED_OPTION',
      'sessionStore.type: "file" asks for a durable session store, and this server keeps sessions in memory (storage_backend "memory", no Redis); omit sessionStore or send {type: "memory"}',
      { field: 'sessionStore.type', options: ['sessionStore'], storageBackend: 'memory' },
    );
  }
  // Agent.createSession refuses a spoofed tenantId (and principal) first; this holds for every other builder of a session.
  if (options.tenantId !== undefined && options.tenantId !== caller.tenantId && !hasScope(caller, 'admin')) {
    throw new CodeError(
      'FORBIDDEN',
      `tenantId: "${options.tenantId}" is not the caller's tenant "${caller.tenantId}"; only admin tokens may create sessions for another tenant`,
      { field: 'tenantId', scope: 'admin' },
    );
  }

  const { config } = deps;
  let chosen = chooseModel(
    config,
    options.model ?? config.defaultModel,
    options.model ? 'model' : 'defaultModel',
    options.temperature,
  );

  const operatorPolicy = config.defaultPermissionPolicy ?? BUILTIN_DEFAULT_POLICY;
  const permissionPolicy = options.permissionPolicy ?? operatorPolicy;
  // Only host_direct callers (which may run anything on the host anyway) replace the operator's policy;
  // anyone else's own policy is bounded by it. A restored session keeps the bound it was created with.
  const bounded = restored
    ? restored.policyBounded
    : options.permissionPolicy !== undefined && !hasScope(caller, 'host_direct');
  const problems = policyProblems(permissionPolicy);
  if (problems.length > 0) {
    const field = options.permissionPolicy ? 'permissionPolicy' : 'defaultPermissionPolicy';
    throw new CodeError('SESSION_CONFIGURATION_ERROR', `${field}.${problems[0]}`, {
      field: `${field}.${problems[0].split(':')[0]}`,
      problems,
    });
  }
  const confirmationPolicy =
    options.confirmationPolicy ?? config.defaultConfirmationPolicy ?? DEFAULT_CONFIRMATION_POLICY;
  if (!restored) await assertCallerGrants(options, caller, config);
  // Webhook URLs in the options are server-side requests a tenant chooses: private addresses only for host_direct
  // creators (kept when restored) or with config outbound.allow_private_networks. Checked at creation and at every call.
  const outboundPrivateGrant = restored ? restored.outboundPrivate === true : hasScope(caller, 'host_direct');
  const outboundAllowPrivate = outboundPrivateGrant || config.outbound.allowPrivateNetworks;
  assertCommandEnv(options.commandEnv);
  const hostCommands = restored ? restored.hostCommands === true : hasScope(caller, 'host_direct');
  const warnings: string[] = [];
  if (options.planning === true && options.planningMode === 'disabled')
    warnings.push('planning: true is ignored; planningMode "disabled" wins over the legacy planning flag');
  if (options.autoCompactThreshold !== undefined && options.autoCompact !== true)
    warnings.push('autoCompactThreshold has no effect without autoCompact: true');
  if (options.securityProvider?.type === 'none')
    warnings.push('securityProvider "none": secrets in tool output are not redacted in this session');

  // With tokens of several tenants a workspace must be in the owner's own space (admins: anywhere in the roots);
  // a restored session keeps the workspace it was created with (see restoredWorkspace).
  const admin = hasScope(caller, 'admin');
  const claim = {
    tenantId: options.tenantId ?? caller.tenantId,
    admin,
    showsRoots: admin || hasScope(caller, 'host_direct'),
  };
  const { workspace, agentsMd, skipped } = await deps.workspaceContext.get(
    {
      requested: options.workspace,
      claim,
      restored: restored !== undefined,
      fallbackNames: options.projectDocFallbackFilenames,
    },
    config,
  );
  const pinned = pinSessionWorkspace(workspace, restored?.workspacePin, restored !== undefined, [
    config.dataDir,
    ...(config.sessionsDir !== undefined ? [config.sessionsDir] : []),
  ]);
  if (pinned.repinned) warnings.push(pinned.repinned);
  // AGENTS.md files leading outside the confinement root were not read: each is a warning and an event.
  warnings.push(...skipped.map((file) => file.message));
  // sessionForAgent: the agent's prompt takes the role slot, its permissions bound every call, its model and
  // max steps apply unless the options name their own. A restored session rebuilds it from its stored options.
  const agents = await resolveSessionAgents({
    configDirs: config.agentDirs,
    sessionDirs: options.agentDirs ?? [],
    workspace: pinned.directory,
    workers: options.workerAgents ?? [],
    // A restored session's workers were checked when it was created.
    workersMayAutoApprove:
      restored !== undefined ||
      mayAutoApprove(hasScope(caller, 'host_direct'), config.delegation.confirmationInheritance),
    agent: options.agent,
  });
  const agent = agents.agent;
  warnings.push(...agents.warnings);
  const skills = await resolveSessionSkills({
    configDirs: config.skillDirs,
    sessionDirs: options.skillDirs ?? [],
    inline: options.inlineSkills ?? [],
    builtin: options.builtinSkills === true,
    workspace: pinned.directory,
  });
  warnings.push(...skills.warnings);
  const personas = skills.registry
    .list()
    .filter((skill) => skill.kind === 'persona')
    .map((skill) => skill.content);
  if (agent?.model !== undefined && options.model === undefined)
    chosen = chooseModel(config, agent.model, `agent "${agent.name}".model`, options.temperature);
  const model = resolveModel(config, chosen.modelId, 'model', options.temperature, deps.providerFor);

  const loop = config.loop;
  const limits = config.limits;
  const { retention, warnings: retentionWarnings } = resolveRetention(options, limits);
  warnings.push(...retentionWarnings);
  const { resume: _resume, ...kept } = options;
  return {
    sessionId: options.sessionId ?? deps.hostEnv.newId('sess'),
    ownerTenantId: options.tenantId ?? caller.tenantId,
    labels: {
      tenantId: options.tenantId ?? caller.tenantId,
      principal: options.principal ?? caller.principal,
      ...(options.agentTemplateId !== undefined ? { agentTemplateId: options.agentTemplateId } : {}),
      ...(options.correlationId !== undefined ? { correlationId: options.correlationId } : {}),
    },
    workspace,
    workspaceDir: pinned.directory,
    ...(pinned.repinned ? { workspaceRepinned: pinned.repinned } : {}),
    ...(skipped.length > 0 ? { workspaceSkipped: skipped } : {}),
    model,
    governance: {
      maxToolRounds: options.maxToolRounds ?? agent?.maxSteps ?? loop.maxToolRounds,
      maxParseRetries: options.maxParseRetries ?? loop.maxParseRetries,
      toolTimeoutMs: options.toolTimeoutMs ?? loop.toolTimeoutMs,
      circuitBreakerThreshold: options.circuitBreakerThreshold ?? loop.circuitBreakerThreshold,
      duplicateToolCallThreshold: options.duplicateToolCallThreshold ?? loop.duplicateToolCallThreshold,
      continuationEnabled: options.continuationEnabled ?? loop.continuationEnabled,
      maxContinuationTurns: options.maxContinuationTurns ?? loop.maxContinuationTurns,
      maxExecutionTimeMs: options.maxExecutionTimeMs ?? loop.maxExecutionTimeMs,
      toolOutputBytes: limits.toolOutputBytes,
      autoCompact: options.autoCompact ?? false,
      autoCompactThreshold: options.autoCompactThreshold ?? DEFAULT_AUTO_COMPACT_THRESHOLD,
      // SessionOptions.maxContextTokens, else the model block's limit.context, else the seed's 200k.
      maxContextTokens: options.maxContextTokens ?? model.contextTokens ?? DEFAULT_CONTEXT_TOKENS,
      maxTranscriptBytes: limits.maxTranscriptBytes,
      maxTranscriptMessages: limits.maxTranscriptMessages,
    },
    // planningMode wins over the legacy `planning` flag.
    planningMode: options.planningMode ?? (options.planning === true ? 'enabled' : 'disabled'),
    goalTracking: options.goalTracking ?? false,
    permissionPolicy,
    ...(bounded ? { permissionFloor: operatorPolicy } : {}),
    permissionBounds: agent ? agentBounds(agent) : [],
    confirmationPolicy,
    agentsMd,
    parentSessionId: null,
    delegationDepth: 0,
    systemPrompt: buildSystemPrompt({
      role: [options.role, agent?.prompt, ...personas].filter((text) => text?.trim()).join('\n\n') || undefined,
      skillsCatalog: skills.registry.discoverable().length > 0,
      guidelines: options.guidelines,
      responseStyle: options.responseStyle,
      extra: options.extra,
      agentsMd,
    }),
    autoSave: options.autoSave ?? false,
    retention,
    sessionStore: options.sessionStore?.type ?? 'file',
    securityProvider: options.securityProvider?.type ?? 'default',
    outboundPrivateGrant,
    outboundAllowPrivate,
    web: config.web,
    memory: options.memoryStore
      ? { type: options.memoryStore.type, namespace: options.memoryStore.namespace ?? 'default' }
      : null,
    commands: {
      hostCommands,
      network: options.sandboxNetwork ?? config.sandbox.network,
      env: options.commandEnv ?? {},
    },
    agent: agent?.name ?? null,
    ...(agent ? { agentDefinition: agent } : {}),
    agents: agents.registry,
    skills: skills.registry,
    initWarning: warnings.length > 0 ? warnings.join('; ') : null,
    options: kept,
  };
}

import { BudgetHostAnswerSchema, type BudgetCheckPayload, type BudgetResource } from '../../../protocol/budget.js';
import { formatZodIssues } from '../../../protocol/format-zod-issues.js';
import { askHost, type HostEndpoint } from '../host-bridge/ask-host.js';
import { describeHostFailure } from '../host-bridge/host-bridge-error.js';
import type { WebSocketHostRegistry } from '../host-bridge/websocket-host-registry.js';
import { ALLOW, sanitizeCount, type BudgetDecision, type BudgetGuard, type BudgetUsage } from './budget-decision.js';
import { UsageMeter } from './usage-meter.js';

/** Default time a budget host has to answer; a slower host denies. */
export const DEFAULT_BUDGET_HOST_TIMEOUT_MS = 5000;

/** Where and for whom a HostBudgetGuard asks. */
export interface HostBudgetGuardOptions {
  endpoint: HostEndpoint;
  sessionId: string;
  tenantId: string;
  /** Needed for WebSocket endpoints. */
  registry?: WebSocketHostRegistry;
  timeoutMs?: number;
  now: () => number;
  newId?: (prefix: string) => string;
  /** The fetch implementation for webhooks (defaults to the global one). */
  fetch?: typeof fetch;
}

/**
 * A budget guard that asks an external host (`kind: "budget_check"`, payload BudgetCheckPayload) before
 * every provider and tool call. It keeps the session's own counters to report `used`. A host that fails,
 * hangs past the timeout or answers something invalid denies: budgets fail closed.
 */
export class HostBudgetGuard implements BudgetGuard {
  private readonly meter: UsageMeter;

  constructor(private readonly options: HostBudgetGuardOptions) {
    this.meter = new UsageMeter(options.now);
  }

  /** Ask the host before a provider call. */
  beforeLlmCall(estimatedTokens: number, signal?: AbortSignal): Promise<BudgetDecision> {
    return this.ask('llm', { estimated_tokens: Math.round(sanitizeCount(estimatedTokens)) }, signal);
  }

  /** Record the tokens a provider call used (reported to the host as `used.tokens`). */
  recordUsage(totalTokens: number): void {
    this.meter.addTokens(sanitizeCount(totalTokens));
  }

  /** Ask the host before a tool call; an admitted call is counted. */
  async beforeToolCall(toolName: string, signal?: AbortSignal): Promise<BudgetDecision> {
    const decision = await this.ask('tool', { tool: toolName }, signal);
    if (decision.kind !== 'deny') this.meter.addToolCalls(1);
    return decision;
  }

  /** Give back the count of an admitted tool call that did not run. */
  releaseToolCall(): void {
    this.meter.addToolCalls(-1);
  }

  /** Start counting active wall time (reported as `used.wall_time_ms`). */
  startClock(): void {
    this.meter.startClock();
  }

  /** Stop counting active wall time. */
  stopClock(): void {
    this.meter.stopClock();
  }

  /** What this session has used, as the host is told. */
  usage(): BudgetUsage {
    return this.meter.usage();
  }

  private async ask(
    phase: 'llm' | 'tool',
    extra: Pick<BudgetCheckPayload, 'tool' | 'estimated_tokens'>,
    signal?: AbortSignal,
  ): Promise<BudgetDecision> {
    const usage = this.meter.usage();
    const fallback: BudgetResource = phase === 'llm' ? 'llm_tokens' : 'tool_calls';
    const payload: BudgetCheckPayload = {
      session_id: this.options.sessionId,
      tenant_id: this.options.tenantId,
      phase,
      ...extra,
      used: {
        tokens: Math.round(usage.tokens),
        tool_calls: usage.toolCalls,
        wall_time_ms: Math.round(usage.wallTimeMs),
      },
    };
    const usedOf = (resource: string): number =>
      resource === 'llm_tokens'
        ? usage.tokens
        : resource === 'tool_calls'
          ? usage.toolCalls
          : resource === 'wall_time'
            ? usage.wallTimeMs
            : 0;
    const deny = (reason: string): BudgetDecision => ({
      kind: 'deny',
      resource: fallback,
      reason,
      used: usedOf(fallback),
      scope: 'host',
    });
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_BUDGET_HOST_TIMEOUT_MS;
    const newId = this.options.newId;
    let answer: unknown;
    try {
      answer = await askHost(this.options.endpoint, 'budget_check', payload, {
        timeoutMs,
        signal,
        registry: this.options.registry,
        fetch: this.options.fetch,
        ...(newId ? { newRequestId: () => newId('breq') } : {}),
      });
    } catch (error) {
      return deny(`budget host failed, so the call is denied: ${describeHostFailure(error).message}`);
    }
    const parsed = BudgetHostAnswerSchema.safeParse(answer);
    if (!parsed.success) {
      return deny(`budget host gave an invalid answer, so the call is denied: ${formatZodIssues(parsed.error)}`);
    }
    if (parsed.data === null || parsed.data.decision === 'allow') return ALLOW;
    const { decision, reason, message, consumed, limit } = parsed.data;
    const resource = parsed.data.resource === 'tokens' ? 'llm_tokens' : (parsed.data.resource ?? fallback);
    return {
      kind: decision,
      resource,
      reason: reason ?? message ?? `budget host answered ${decision}`,
      used: consumed ?? usedOf(resource),
      ...(limit !== undefined ? { limit } : {}),
      scope: 'host',
    };
  }
}

import { CodeError } from '../../../errors.js';
import { formatZodIssues } from '../../../protocol/format-zod-issues.js';
import {
  HookResponseSchema,
  isGatingHookEvent,
  isObservingHookEvent,
  type GatingHookEvent,
  type HookEvent,
  type HookInfo,
  type HookRegistrationInput,
  type HookResponse,
  type ObservingHookEvent,
} from '../../../protocol/hooks.js';
import { askHost } from '../host-bridge/ask-host.js';
import { redactStrings } from '../redact-strings.js';
import { describeHostFailure } from '../host-bridge/host-bridge-error.js';
import { linkSignals } from '../host-bridge/linked-signal.js';
import type { WebSocketHostRegistry } from '../host-bridge/websocket-host-registry.js';
import { BoundedTaskQueue } from './bounded-task-queue.js';
import { hookMatches } from './hook-matcher.js';
import type { HookExecution, HookFailure, HookMatchInput, HookOutcome } from './hook-outcome.js';
import {
  hookInfo,
  resolveConfigHooks,
  resolveSessionHook,
  runOrder,
  type HookOwner,
  type StoredHook,
} from './hook-registrations.js';

/** Default bound on hooks one session may register (config hooks not counted). */
export const DEFAULT_MAX_SESSION_HOOKS = 64;
/** Default number of observing-hook requests in flight per engine. */
export const DEFAULT_OBSERVE_CONCURRENCY = 4;
/** Default backlog of observing-hook requests per engine; beyond it observations are dropped and reported. */
export const DEFAULT_MAX_QUEUED_OBSERVATIONS = 256;

// Events whose `modified` answer replaces the tool arguments (other gating events merge it into the payload).
const ARGS_EVENTS: ReadonlySet<string> = new Set(['pre_tool_use', 'permission_request']);

/** Dependencies and bounds of a HookEngine. */
export interface HookEngineOptions {
  registry: WebSocketHostRegistry;
  /** Config-declared hooks (ConfigHookRegistration, webhooks only): they apply to every session's engine. */
  configHooks?: readonly unknown[];
  /** Whether config hook `index` may call private addresses (default: every one; see resolveConfigHooks). */
  configHookMayCallPrivate?: (index: number) => boolean;
  now(): number;
  newId(prefix: string): string;
  /** Told about every failing hook (gating failures too, after they blocked). Must not throw. */
  onError?(failure: HookFailure): void;
  /** The session workspace, so path matchers also see workspace-relative paths. */
  workspace?: string;
  maxHooks?: number;
  observeConcurrency?: number;
  maxQueuedObservations?: number;
  /** The fetch implementation for webhooks (defaults to the global one). */
  fetch?: typeof fetch;
  /**
   * The server's secret redactor: every string of a request to a hook (webhook or WebSocket host) goes through it,
   * the rule run webhooks and trace content share. Absent: payloads are sent as they are (unit tests).
   */
  redact?: (text: string) => string;
}

type AskResult = { ok: true; response: HookResponse } | { ok: false; failure: HookFailure['failure']; message: string };

/**
 * One session's hooks (plus the config-declared hooks every session has). Gating events run matching hooks
 * in order and fail closed; observing events notify matching hooks in the background, never waiting.
 */
export class HookEngine {
  // Created by the first session hook: most sessions register none.
  private sessionHooks: Map<string, StoredHook> | undefined;
  private readonly configHooks: readonly StoredHook[];
  private readonly queue: BoundedTaskQueue;
  // Created when a hook first runs: most sessions have no hooks and never need a closing signal.
  private closingController: AbortController | undefined;
  private closed = false;
  private nextSeq: number;

  constructor(private readonly options: HookEngineOptions) {
    this.configHooks = resolveConfigHooks(options.configHooks ?? [], options.now(), options.configHookMayCallPrivate);
    this.nextSeq = this.configHooks.length;
    this.queue = new BoundedTaskQueue({
      concurrency: options.observeConcurrency ?? DEFAULT_OBSERVE_CONCURRENCY,
      maxQueued: options.maxQueuedObservations ?? DEFAULT_MAX_QUEUED_OBSERVATIONS,
    });
  }

  /**
   * Register a session hook; throws VALIDATION_ERROR naming the field (bad body, duplicate id, unknown connection,
   * too many hooks). A websocket registration under the id of a websocket hook replaces it (keeping its place in
   * the run order) when that hook's connection has closed or belongs to the same tenant and principal: a host that
   * reconnected registers again under the same ids.
   */
  register(input: HookRegistrationInput, owner?: HookOwner): HookInfo {
    const max = this.options.maxHooks ?? DEFAULT_MAX_SESSION_HOOKS;
    const sessionHooks = (this.sessionHooks ??= new Map());
    const requested =
      typeof input === 'object' && input !== null && typeof input.id === 'string' ? input.id : undefined;
    const existing = requested === undefined ? undefined : sessionHooks.get(requested);
    const duplicate = () =>
      new CodeError('VALIDATION_ERROR', `id: a hook "${requested}" already exists in this session`, {
        issues: [{ path: 'id', message: 'duplicate hook id' }],
      });
    if (requested !== undefined && this.configHooks.some((hook) => hook.id === requested)) throw duplicate();
    if (existing !== undefined && existing.endpoint.kind !== 'websocket') throw duplicate();
    if (existing === undefined && sessionHooks.size >= max)
      throw new CodeError('VALIDATION_ERROR', `a session holds at most ${max} hooks (maxHooks)`, { limit: max });
    const hook = resolveSessionHook(
      input,
      owner,
      this.options.registry,
      () => this.options.newId('hook'),
      existing?.seq ?? this.nextSeq,
      this.options.now(),
    );
    if (existing !== undefined && !this.replaceable(existing, hook)) throw duplicate();
    if (existing === undefined) this.nextSeq += 1;
    sessionHooks.set(hook.id, hook);
    return hookInfo(hook, this.options.registry);
  }

  /** A websocket hook gives way to a websocket registration of its id when its socket is gone or is the same owner's. */
  private replaceable(existing: StoredHook, next: StoredHook): boolean {
    if (existing.endpoint.kind !== 'websocket' || next.endpoint.kind !== 'websocket') return false;
    const registry = this.options.registry;
    if (!registry.has(existing.endpoint.connectionId)) return true;
    const before = registry.bindingOf(existing.endpoint.connectionId);
    const after = registry.bindingOf(next.endpoint.connectionId);
    return (
      before !== undefined &&
      after !== undefined &&
      before.tenantId === after.tenantId &&
      before.principal === after.principal
    );
  }

  /** Every hook of the session (config hooks included), in the order they run. */
  list(): HookInfo[] {
    return this.all().map((hook) => hookInfo(hook, this.options.registry));
  }

  /** Remove a session hook; false when unknown (config hooks cannot be removed). */
  remove(id: string): boolean {
    return this.sessionHooks?.delete(id) ?? false;
  }

  /**
   * Run the matching hooks of a gating event in priority order; the first answer other than `continue`
   * wins. `modified` answers carry forward to later hooks (and their matchers) and to the caller. A hook
   * that fails, times out or answers invalid JSON blocks, with a reason naming the hook and the failure.
   */
  async gate(
    event: GatingHookEvent,
    payload: Record<string, unknown>,
    match: HookMatchInput,
    signal?: AbortSignal,
  ): Promise<HookOutcome> {
    // Callers typed against plain strings (GovernanceHooks) can still pass anything: refuse loudly.
    if (!isGatingHookEvent(event)) throw new TypeError(`"${event}" is not a gating hook event`);
    // No hook can match: nothing to run, so no linked signal either (the common case, on every run and tool call).
    if (!this.hasHooks()) return { action: 'continue', executions: [] };
    const link = linkSignals([signal, this.closingSignal()]);
    try {
      return await this.runGate(event, payload, match, link.signal);
    } finally {
      link.dispose();
    }
  }

  private async runGate(
    event: GatingHookEvent,
    payload: Record<string, unknown>,
    match: HookMatchInput,
    signal: AbortSignal,
  ): Promise<HookOutcome> {
    const executions: HookExecution[] = [];
    let current = { ...payload };
    let args = match.args;
    let argsModified = false;
    let payloadModified = false;
    for (const hook of this.all()) {
      if (hook.event !== event || !this.matches(hook, match, args)) continue;
      const started = this.options.now();
      const result = await this.askWithRetries(hook, current, signal);
      const durationMs = Math.max(0, this.options.now() - started);
      if (!result.ok) {
        executions.push({ hookId: hook.id, action: 'failed', durationMs, reason: result.message });
        this.report({ hookId: hook.id, event, failure: result.failure, message: result.message });
        return {
          action: 'block',
          reason: `hook ${hook.id} (${event}) failed, so the operation is blocked: ${result.message}`,
          hookId: hook.id,
          failed: true,
          executions,
        };
      }
      const { action, reason, modified } = result.response;
      executions.push({ hookId: hook.id, action, durationMs, ...(reason !== undefined ? { reason } : {}) });
      if (action !== 'continue')
        return { action, ...(reason !== undefined ? { reason } : {}), hookId: hook.id, executions };
      if (modified === undefined) continue;
      if (ARGS_EVENTS.has(event)) {
        args = modified;
        current = { ...current, args: modified };
        argsModified = true;
      } else {
        current = { ...current, ...modified };
        payloadModified = true;
      }
    }
    return {
      action: 'continue',
      ...(argsModified ? { modifiedArgs: args as Record<string, unknown> } : {}),
      ...(payloadModified ? { modifiedPayload: current } : {}),
      executions,
    };
  }

  /**
   * True when some hook of the session listens to `event`: callers test it before building a payload, so an
   * event nobody hooked costs one loop over the (usually empty) hook list and nothing else. Still true once the
   * engine closed, so a gate racing the close is asked (and blocks) rather than skipped.
   */
  wants(event: HookEvent): boolean {
    for (const hook of this.configHooks) if (hook.event === event) return true;
    if (this.sessionHooks === undefined) return false;
    for (const hook of this.sessionHooks.values()) if (hook.event === event) return true;
    return false;
  }

  /**
   * Notify the matching hooks of an observing event without waiting: requests run in the background with
   * bounded concurrency. Hooks without `asyncExecution` are told one after another in priority order, and an
   * answer other than `continue` stops the later ones (the seed's chain); `asyncExecution` hooks are told at
   * once, each on its own. Failures (after `maxRetries`) and drops (a full backlog) go to onError.
   */
  observe(event: ObservingHookEvent, payload: Record<string, unknown>, match: HookMatchInput): void {
    if (!isObservingHookEvent(event)) throw new TypeError(`"${event}" is not an observing hook event`);
    if (this.closed || !this.hasHooks()) return;
    let chain: StoredHook[] | undefined;
    for (const hook of this.all()) {
      if (hook.event !== event || !this.matches(hook, match, match.args)) continue;
      if (!hook.asyncExecution) (chain ??= []).push(hook);
      else this.enqueue([hook], async () => void (await this.tell(hook, payload)));
    }
    if (chain !== undefined) {
      const hooks = chain;
      this.enqueue(hooks, async () => {
        for (const hook of hooks) if (!(await this.tell(hook, payload))) return;
      });
    }
  }

  /** Tell one observing hook; true when the chain goes on (it answered continue, or failed: observers fail open). */
  private async tell(hook: StoredHook, payload: Record<string, unknown>): Promise<boolean> {
    const result = await this.askWithRetries(hook, payload, this.closingSignal(), false);
    if (!result.ok) {
      this.report({ hookId: hook.id, event: hook.event, failure: result.failure, message: result.message });
      return !this.closed;
    }
    return result.response.action === 'continue';
  }

  private enqueue(hooks: readonly StoredHook[], task: () => Promise<void>): void {
    if (this.queue.push(task)) return;
    const limit = this.options.maxQueuedObservations ?? DEFAULT_MAX_QUEUED_OBSERVATIONS;
    for (const hook of hooks)
      this.report({
        hookId: hook.id,
        event: hook.event,
        failure: 'dropped',
        message: `observation dropped: ${limit} observations already waiting (maxQueuedObservations)`,
      });
  }

  private matches(hook: StoredHook, match: HookMatchInput, args: unknown): boolean {
    return hookMatches(hook.matcher, {
      toolName: match.toolName,
      args,
      sessionId: match.sessionId,
      ...(match.skill !== undefined ? { skill: match.skill } : {}),
      workspace: this.options.workspace,
    });
  }

  /** Resolves once every queued or running observation has finished. */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  /** Stop: queued observations are dropped and in-flight requests aborted (a gate in flight blocks). Idempotent. */
  close(): void {
    this.closed = true;
    this.queue.clear();
    this.closingController?.abort();
  }

  /** The signal that fires when the engine closes (already aborted once it has closed). */
  private closingSignal(): AbortSignal {
    if (this.closingController === undefined) {
      this.closingController = new AbortController();
      if (this.closed) this.closingController.abort();
    }
    return this.closingController.signal;
  }

  private hasHooks(): boolean {
    return this.configHooks.length > 0 || (this.sessionHooks?.size ?? 0) > 0;
  }

  private all(): StoredHook[] {
    return [...this.configHooks, ...(this.sessionHooks?.values() ?? [])].sort(runOrder);
  }

  /** Ask a hook, repeating a failed request up to its `maxRetries` (never once the signal fired). */
  private async askWithRetries(
    hook: StoredHook,
    payload: Record<string, unknown>,
    signal: AbortSignal,
    strict = true,
  ): Promise<AskResult> {
    let result = await this.ask(hook, payload, signal, strict);
    for (let retry = 0; !result.ok && retry < hook.maxRetries && !signal.aborted; retry++)
      result = await this.ask(hook, payload, signal, strict);
    return result;
  }

  /** One request; `strict` (gating) makes an answer that is not a HookResponse a failure, else it means continue. */
  private async ask(
    hook: StoredHook,
    payload: Record<string, unknown>,
    signal: AbortSignal,
    strict: boolean,
  ): Promise<AskResult> {
    let answer: unknown;
    try {
      const redact = this.options.redact;
      const sent = redact === undefined ? payload : redactStrings(payload, redact);
      answer = await askHost(
        hook.endpoint,
        hook.event,
        { ...sent, hook_id: hook.id },
        {
          timeoutMs: hook.timeoutMs,
          signal,
          registry: this.options.registry,
          newRequestId: () => this.options.newId('hreq'),
          fetch: this.options.fetch,
        },
      );
    } catch (error) {
      const { failure, message } = describeHostFailure(error);
      return {
        ok: false,
        failure,
        message: failure === 'aborted' && this.closed ? 'the hook engine was closed' : message,
      };
    }
    const parsed = HookResponseSchema.safeParse(answer);
    if (parsed.success) return { ok: true, response: parsed.data };
    if (!strict) return { ok: true, response: { action: 'continue' } };
    return { ok: false, failure: 'invalid_response', message: `invalid answer: ${formatZodIssues(parsed.error)}` };
  }

  private report(failure: HookFailure): void {
    try {
      this.options.onError?.(failure);
    } catch {
      // A throwing error callback must not turn a hook failure into a pipeline fault.
    }
  }
}

import { readAgentEventEnvelope } from '../protocol/agent-event-envelope.js';
import type { BudgetCheckPayload, BudgetHostAnswer } from '../protocol/budget.js';
import type { CommandContext } from '../protocol/commands.js';
import type { HookEvent, HookMatcher, HookResponse } from '../protocol/hooks.js';

/** What a hook handler answers: the seed's HookResponse, or null/undefined for `continue`. */
export type HookHandlerResult = HookResponse | null | undefined;
/** A JS hook: gets the event's payload (the seed's shapes, plus `hook_id`), answers continue/block/skip/retry. */
export type HookHandler = (
  payload: Record<string, unknown>,
  event: HookEvent,
) => HookHandlerResult | Promise<HookHandlerResult>;
/** Hook options (the seed's config): priority (lower runs first) and timeoutMs (the server waits that long, then fails closed). */
export interface HookOptions {
  priority?: number;
  timeoutMs?: number;
  /** Observing events: told without waiting for earlier hooks (the seed's fire-and-forget; ignored for gating events). */
  asyncExecution?: boolean;
  /** Times a failed request to the hook is repeated. */
  maxRetries?: number;
}
/** A JS slash command: `(args, ctx) => text`. */
export type CommandHandler = (args: string, ctx: CommandContext) => string | Promise<string>;
/** A command that needs no host: a template rendered by the server, or a webhook. */
export type CommandSpec =
  { kind: 'template'; template: string } | { kind: 'webhook'; url: string; headers?: Record<string, string> };
/** Options of registerCommand. */
export interface CommandOptions {
  timeoutMs?: number;
  /** Replace a built-in command of the same name. */
  override?: boolean;
}
/** A budget decision: null (allow), `{decision: 'allow'}`, `{decision: 'soft', resource, consumed, limit, message?}`, `{decision: 'deny', resource, reason}`. */
export type BudgetDecision = BudgetHostAnswer | undefined;
/** The seed's budget guard callbacks; a callback that throws or hangs past timeoutMs denies (fail closed). */
export interface BudgetGuard {
  /** Before every provider call. */
  checkBeforeLlm?: (ctx: {
    sessionId: string;
    estimatedTokens: number;
    used: BudgetCheckPayload['used'];
  }) => BudgetDecision | Promise<BudgetDecision>;
  /** Before every tool call. */
  checkBeforeTool?: (ctx: {
    sessionId: string;
    toolName: string;
    used: BudgetCheckPayload['used'];
  }) => BudgetDecision | Promise<BudgetDecision>;
  /** After every model turn (fed from the session's `turn_end` events on the host socket). */
  recordAfterLlm?: (ctx: {
    sessionId: string;
    usage: { promptTokens: number; completionTokens: number; totalTokens: number };
  }) => void;
  /** How long the server waits for a check (default 5000 ms). */
  timeoutMs?: number;
}

/** A hook this client registered, kept to register it again on a new host connection. */
export interface HookEntry {
  event: HookEvent;
  matcher: HookMatcher | null | undefined;
  options: HookOptions | null | undefined;
  handler: HookHandler | undefined;
}

/** A command this client registered, kept to register it again on a new host connection. */
export interface CommandEntry {
  description: string;
  handler: CommandHandler | CommandSpec;
  options: CommandOptions;
}

/** A frame of the host socket, as far as the host reads it. */
export interface HostFrame {
  type?: unknown;
  request_id?: unknown;
  kind?: unknown;
  payload?: unknown;
  metadata?: unknown;
}

/** What a SessionHost registered (hooks, commands, the budget guard) and how it answers the server's requests for them. */
export class HostRegistrations {
  readonly hooks = new Map<string, HookEntry>();
  readonly commands = new Map<string, CommandEntry>();
  guard: BudgetGuard | undefined;

  constructor(private readonly sessionId: string) {}

  /** True when a socket that went away has registrations to restore. */
  get any(): boolean {
    return (
      this.hooks.size > 0 ||
      this.guard !== undefined ||
      [...this.commands.values()].some((entry) => typeof entry.handler === 'function')
    );
  }

  /** The answer frame of a `hook_request` (hooks, `budget_check`) or `command_request`, from the JS callbacks. */
  async answer(
    type: 'hook_request' | 'command_request',
    requestId: string,
    kind: string,
    payload: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    if (type === 'command_request')
      return { type: 'command_response', request_id: requestId, ...(await this.commandAnswer(payload)) };
    if (kind === 'budget_check')
      return {
        type: 'hook_response',
        request_id: requestId,
        ...(await this.budgetAnswer(payload as unknown as BudgetCheckPayload)),
      };
    return { type: 'hook_response', request_id: requestId, ...(await this.hookAnswer(kind as HookEvent, payload)) };
  }

  private async hookAnswer(event: HookEvent, payload: Record<string, unknown>): Promise<Record<string, unknown>> {
    const hookId = String(payload.hook_id);
    if (!this.hooks.has(hookId)) return { action: 'block', reason: `no handler for hook ${hookId} in this client` };
    const handler = this.hooks.get(hookId)?.handler;
    try {
      const result = handler ? await handler(payload, event) : undefined;
      return result ?? { action: 'continue' };
    } catch (error) {
      // Gating hooks fail closed, as the server does when a host fails.
      return {
        action: 'block',
        reason: `hook ${hookId} handler failed: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  }

  private async commandAnswer(payload: Record<string, unknown>): Promise<Record<string, unknown>> {
    const ctx = payload as unknown as CommandContext;
    const handler = this.commands.get(ctx.command)?.handler;
    if (typeof handler !== 'function') return { error: `no handler for command /${ctx.command} in this client` };
    try {
      return { text: String(await handler(ctx.args, ctx)) };
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) };
    }
  }

  private async budgetAnswer(payload: BudgetCheckPayload): Promise<Record<string, unknown>> {
    const guard = this.guard;
    try {
      const decision =
        payload.phase === 'llm'
          ? await guard?.checkBeforeLlm?.({
              sessionId: payload.session_id,
              estimatedTokens: payload.estimated_tokens ?? 0,
              used: payload.used,
            })
          : await guard?.checkBeforeTool?.({
              sessionId: payload.session_id,
              toolName: payload.tool ?? '',
              used: payload.used,
            });
      return decision ?? { decision: 'allow' };
    } catch (error) {
      return {
        decision: 'deny',
        reason: `budget guard failed: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  }

  /** Feed recordAfterLlm from a turn_end event of the socket (one that is not the registered shape feeds nothing). */
  recordTurn(frame: HostFrame): void {
    const record = this.guard?.recordAfterLlm;
    const read = record ? readAgentEventEnvelope(frame) : undefined;
    if (!record || !read?.ok || read.event.type !== 'turn_end') return;
    const usage = read.event.payload.usage;
    try {
      record({
        sessionId: this.sessionId,
        usage: {
          promptTokens: usage.prompt_tokens,
          completionTokens: usage.completion_tokens,
          totalTokens: usage.total_tokens,
        },
      });
    } catch {
      // The seed's recordAfterLlm must not throw; a throwing one is ignored.
    }
  }
}

import type { ChatMessage } from '../../protocol/chat-message.js';
import {
  LlmProviderError,
  type LlmEventSink,
  type LlmProvider,
  type LlmRequest,
  type LlmResponseFormat,
  type LlmToolSpec,
} from '../llm/llm-provider.js';
import { addUsage, type Usage } from '../../protocol/run-record.js';
import type { SessionGovernance } from '../policy/session-governance.js';
import { providerFailureText } from './provider-failure-text.js';
import { budgetEventPayload } from '../policy/budget/budget-event.js';
import { abortableDelay } from '../signals/abortable-delay.js';
import { GovernedCallError } from './governed-call-error.js';
import type { ProviderCallLane } from '../ports/provider-call-lane.js';
import type { InvocationContext } from './invocation-context.js';
import { ProviderCallError, retryDelayMs } from './provider-retry.js';
import { attachmentParts, type AttachmentReader } from '../attachments/attachment-parts.js';
import { ProviderCallSpan } from './provider-call-span.js';

const noAttachments: AttachmentReader = { read: () => Promise.resolve(undefined) };

/** A model resolved from "provider/model": the provider client and the bare model name it expects. */
export interface ResolvedModel {
  /** "provider/model" as configured. */
  readonly id: string;
  readonly providerName: string;
  /** The bare model name sent to the provider. */
  readonly modelName: string;
  readonly provider: LlmProvider;
  readonly maxTokens?: number;
  readonly temperature?: number;
  /** The model block's context window (limit.context), when it names one. */
  readonly contextTokens?: number;
  /** The model block says `reasoning = true`: its turns are told to pre_reasoning and post_reasoning hooks. */
  readonly reasoning?: boolean;
  /** The model block's `modalities.input` has "image": image attachments and images `read` returns are sent to it. */
  readonly acceptsImages?: boolean;
}

const specChars = new WeakMap<LlmToolSpec, number>();

/** A rough token estimate (4 characters a token) for the budget check before a provider call. */
export function estimateTokens(messages: readonly ChatMessage[], tools: readonly LlmToolSpec[]): number {
  let chars = 0;
  for (const m of messages) {
    chars += m.content?.length ?? 0;
    for (const call of m.tool_calls ?? []) chars += call.function.name.length + call.function.arguments.length;
  }
  // Tool specs are cached objects shared by every session, so each one is measured once.
  for (const tool of tools) {
    let size = specChars.get(tool);
    if (size === undefined) {
      size = tool.description.length + JSON.stringify(tool.parameters).length;
      specChars.set(tool, size);
    }
    chars += size;
  }
  return Math.ceil(chars / 4);
}

/** Per-call options of LlmInvoker.stream. */
export interface LlmCallOptions {
  responseFormat?: LlmResponseFormat;
  /** The run's turn, named in provider_retry events (helper calls have none). */
  turn?: number;
}

/**
 * The one LLM invoker of a session: every provider call (turns, continuations, compaction and helper
 * calls) goes through it. It consults the budget guard before the call (deny fails the run with
 * BUDGET_EXHAUSTED, soft emits budget_threshold_hit), records the reported usage after it, tells
 * generate_start/generate_end hooks, and counts requests. It is the one retry layer: a retryable failure
 * (429, 5xx, a dropped connection) before any output is retried up to the provider's `max_retries`, each
 * retry a `provider_retry` event after a wait (Retry-After, else exponential backoff); then the call fails
 * with PROVIDER_ERROR and its status. The circuit breaker counts failed calls, not requests: after
 * `circuitBreakerThreshold` calls in a row failed so, the next call is one probe request (no retries), and
 * a failed probe is CIRCUIT_BREAKER_OPEN; any success closes it.
 */
export class LlmInvoker {
  private calls = 0;
  private failedCalls = 0;

  constructor(
    /** The session's configuration: its current model is read at each call (`/model` may switch it between runs). */
    private readonly config: { readonly model: ResolvedModel },
    /** The session's governance (built on first use). */
    private readonly governance: { readonly session: SessionGovernance },
    /** A queued session's generate lane (its parent's for a task child); absent: requests never wait. */
    private readonly lane?: ProviderCallLane,
    /** Reads the session's attachments when a request's messages reference some (absent: placeholders). */
    private readonly attachments?: AttachmentReader,
  ) {}

  private get model(): ResolvedModel {
    return this.config.model;
  }

  /** The session's current model ("provider/model"). */
  get modelId(): string {
    return this.model.id;
  }

  /** Provider requests made through this invoker (each retry is one). */
  get callCount(): number {
    return this.calls;
  }

  /**
   * Stream one completion into `onEvent`. The provider gets a per-call signal linked to the run's: provider
   * SDKs may add abort listeners they never remove (the openai SDK does), and the link is dropped when the
   * call ends, so a long run does not collect one listener per turn.
   */
  async stream(
    messages: ChatMessage[],
    tools: readonly LlmToolSpec[],
    ctx: InvocationContext,
    onEvent: LlmEventSink,
    options: LlmCallOptions = {},
  ): Promise<void> {
    const governance = this.governance.session;
    const match = { sessionId: ctx.sessionId };
    if (governance.budget) {
      const estimate = estimateTokens(messages, tools);
      let decision;
      try {
        decision = await governance.budget.beforeLlmCall(estimate, ctx.signal);
      } catch (error) {
        decision = {
          kind: 'deny' as const,
          resource: 'llm_tokens',
          reason: `budget guard failed: ${error instanceof Error ? error.message : String(error)}`,
        };
      }
      if (decision.kind !== 'allow') {
        const payload = budgetEventPayload(decision);
        if (decision.kind === 'deny') {
          ctx.emit('budget_exhausted', payload);
          throw new GovernedCallError('BUDGET_EXHAUSTED', `BUDGET_EXHAUSTED: ${decision.resource}: ${decision.reason}`);
        }
        ctx.emit('budget_threshold_hit', payload);
      }
    }
    const signal = ctx.signal;
    const call = new AbortController();
    const onAbort = (): void => call.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    const model = this.model;
    const last = messages.at(-1);
    if (governance.hooks?.wants('generate_start'))
      governance.hooks.observe(
        'generate_start',
        {
          session_id: ctx.sessionId,
          run_id: ctx.runId,
          model: model.id,
          prompt: last?.content ?? '',
          message_count: messages.length,
        },
        match,
      );
    let totalTokens = 0;
    let responseText = '';
    const hooked = governance.hooks?.wants('generate_end') === true;
    // pre_reasoning/post_reasoning: each call of a reasoning model, only when hooked (reasoning text kept only then).
    const reasoningHooks = model.reasoning === true && governance.hooks?.wants('post_reasoning') === true;
    let reasoningText = '';
    const reasoningStarted = reasoningHooks ? ctx.hostEnv.now() : 0;
    if (model.reasoning === true && governance.hooks?.wants('pre_reasoning'))
      governance.hooks.observe(
        'pre_reasoning',
        { session_id: ctx.sessionId, run_id: ctx.runId, turn: options.turn ?? 0, model: model.id },
        match,
      );
    const request: LlmRequest = { model: model.modelName, messages, tools, signal: call.signal };
    if (model.maxTokens !== undefined) request.maxTokens = model.maxTokens;
    if (model.temperature !== undefined) request.temperature = model.temperature;
    if (options.responseFormat) request.responseFormat = options.responseFormat;
    // Once output reached the consumer a retry would repeat it: the failure is final.
    let streamed = false;
    const traced = ProviderCallSpan.start(ctx, model, messages);
    let failure: unknown;
    const sink: LlmEventSink = (event) => {
      traced?.observe(event);
      if (event.type === 'usage') totalTokens += event.totalTokens;
      else if (event.type === 'text_delta' || event.type === 'reasoning_delta' || event.type === 'tool_call_start') {
        streamed = true;
        if (hooked && event.type === 'text_delta') responseText += event.text;
        else if (reasoningHooks && event.type === 'reasoning_delta') reasoningText += event.text;
      }
      onEvent(event);
    };
    try {
      // Attachment bytes are read for this call only: the request holds them until the call (and its retries) ends.
      if (messages.some((message) => message.attachments !== undefined)) {
        const parts = await attachmentParts(messages, this.attachments ?? noAttachments, model.acceptsImages === true);
        if (parts !== undefined) request.contentParts = parts;
      }
      await this.withRetries(
        model.provider,
        ctx,
        options.turn,
        () => streamed,
        this.lane === undefined
          ? async () => {
              this.calls += 1;
              await model.provider.stream(request, sink);
            }
          : async () => {
              this.calls += 1;
              await this.inLane(this.lane as ProviderCallLane, ctx, () => model.provider.stream(request, sink));
            },
      );
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      traced?.end(failure);
      signal.removeEventListener('abort', onAbort);
      // Streaming terminal usage is recorded even when the stream broke after reporting it.
      governance.budget?.recordUsage(totalTokens);
      if (hooked)
        governance.hooks?.observe(
          'generate_end',
          {
            session_id: ctx.sessionId,
            run_id: ctx.runId,
            model: model.id,
            response_text: responseText,
            total_tokens: totalTokens,
          },
          match,
        );
      if (reasoningHooks)
        governance.hooks?.observe(
          'post_reasoning',
          {
            session_id: ctx.sessionId,
            run_id: ctx.runId,
            turn: options.turn ?? 0,
            model: model.id,
            reasoning_text: reasoningText,
            duration_ms: Math.max(0, ctx.hostEnv.now() - reasoningStarted),
          },
          match,
        );
    }
  }

  /** One provider request inside a slot of the generate lane (a retry waits for a slot again: backoff holds none). */
  private async inLane(lane: ProviderCallLane, ctx: InvocationContext, send: () => Promise<void>): Promise<void> {
    const release = await lane.enter(ctx.signal, ctx.emit);
    if (!release)
      throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('cancelled in the generate lane');
    let ok = false;
    try {
      await send();
      ok = true;
    } finally {
      release(ok);
    }
  }

  /** Makes the requests of one call: the first, and a retry per retryable failure, within max_retries and the breaker. */
  private async withRetries(
    provider: LlmProvider,
    ctx: InvocationContext,
    turn: number | undefined,
    streamed: () => boolean,
    send: () => Promise<void>,
  ): Promise<void> {
    const threshold = ctx.governance.circuitBreakerThreshold;
    // An open breaker (threshold failed calls in a row) lets one probe request through, without retries.
    const probing = this.failedCalls >= threshold;
    const maxRetries = probing ? 0 : (provider.maxRetries ?? 0);
    for (let attempt = 0; ; attempt += 1) {
      try {
        await send();
        this.failedCalls = 0;
        return;
      } catch (error) {
        // Cancellation, and what the consumer threw, pass unchanged (and are no provider failure).
        if (ctx.signal.aborted || !(error instanceof LlmProviderError)) throw error;
        const requests = attempt + 1;
        const said = providerFailureText(error.status, error.message, this.governance.session.redactor);
        if (error.status === 429)
          this.rateLimited(ctx, error, requests, error.retryable && !streamed() && attempt < maxRetries);
        if (!error.retryable || streamed())
          throw new ProviderCallError(
            'PROVIDER_ERROR',
            `provider call failed${statusText(error.status)}: ${said}`,
            error.status,
            requests,
          );
        if (attempt >= maxRetries) {
          this.failedCalls += 1;
          if (this.failedCalls >= threshold) {
            throw new ProviderCallError(
              'CIRCUIT_BREAKER_OPEN',
              `${this.failedCalls} provider calls in a row failed (circuitBreakerThreshold ${threshold}); last${statusText(error.status)} after ${requests} request(s): ${said}`,
              error.status,
              requests,
            );
          }
          throw new ProviderCallError(
            'PROVIDER_ERROR',
            `provider call failed${statusText(error.status)} after ${requests} request(s) (max_retries ${maxRetries}): ${said}`,
            error.status,
            requests,
          );
        }
        const retry = attempt + 1;
        const delay = retryDelayMs(error, retry);
        ctx.emit('provider_retry', {
          ...(turn !== undefined ? { turn } : {}),
          attempt: retry,
          threshold: maxRetries,
          status: error.status ?? null,
          delay_ms: delay,
          message: `${turn !== undefined ? `turn ${turn}: ` : ''}provider failure${statusText(error.status)}, retry ${retry}/${maxRetries} in ${delay} ms: ${said}`,
        });
        // A cancel during the wait ends it at once; the loop then reports the run cancelled.
        if (!(await abortableDelay(delay, ctx.signal))) throw error;
      }
    }
  }

  /** Tell on_rate_limit hooks of a provider 429 (its Retry-After, and whether the invoker retries it). */
  private rateLimited(ctx: InvocationContext, error: LlmProviderError, attempt: number, willRetry: boolean): void {
    const hooks = this.governance.session.hooks;
    if (!hooks?.wants('on_rate_limit')) return;
    const model = this.model;
    hooks.observe(
      'on_rate_limit',
      {
        session_id: ctx.sessionId,
        run_id: ctx.runId,
        provider: model.providerName,
        model: model.id,
        status: 429,
        retry_after_ms: error.retryAfterMs ?? null,
        attempt,
        will_retry: willRetry,
        message: providerFailureText(429, error.message, this.governance.session.redactor),
      },
      { sessionId: ctx.sessionId },
    );
  }

  /**
   * One run-owned helper call without tools (planning, structured output and its repairs, goal checks,
   * compaction): the same budget check, usage record, hooks and cancellation as a turn, answered as the
   * whole text and the usage the provider reported.
   */
  async complete(
    messages: ChatMessage[],
    ctx: InvocationContext,
    responseFormat?: LlmResponseFormat,
  ): Promise<LlmCompletion> {
    let text = '';
    const usage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
    await this.stream(
      messages,
      [],
      ctx,
      (event) => {
        if (event.type === 'text_delta') text += event.text;
        else if (event.type === 'usage') addUsage(usage, event);
      },
      responseFormat ? { responseFormat } : {},
    );
    return { text, usage };
  }
}

/** What a helper call answered. */
export interface LlmCompletion {
  text: string;
  usage: Usage;
}

function statusText(status: number | undefined): string {
  return status === undefined ? '' : ` (HTTP ${status})`;
}

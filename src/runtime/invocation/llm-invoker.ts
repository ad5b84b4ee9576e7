import type { ChatMessage } from '../../protocol/chat-message.js';
import type { LlmEventSink, LlmProvider, LlmRequest, LlmResponseFormat, LlmToolSpec } from '../llm/llm-provider.js';
import { addUsage, type Usage } from '../../protocol/run-record.js';
import type { SessionGovernance } from '../policy/session-governance.js';
import { budgetEventPayload } from '../policy/budget/budget-event.js';
import { GovernedCallError } from './governed-call-error.js';
import type { InvocationContext } from './invocation-context.js';

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

/**
 * The one LLM invoker of a session: every provider call (turns, continuations, later compaction and
 * helper calls) goes through it. It consults the budget guard before the call (deny fails the run with
 * BUDGET_EXHAUSTED, soft emits budget_threshold_hit), records the reported usage after it, tells
 * generate_start/generate_end hooks, and counts calls.
 */
export class LlmInvoker {
  private calls = 0;

  constructor(
    /** The session's configuration: its current model is read at each call (`/model` may switch it between runs). */
    private readonly config: { readonly model: ResolvedModel },
    /** The session's governance (built on first use). */
    private readonly governance: { readonly session: SessionGovernance },
  ) {}

  private get model(): ResolvedModel {
    return this.config.model;
  }

  /** Provider calls made through this invoker. */
  get callCount(): number {
    return this.calls;
  }

  /**
   * Stream one completion into `onEvent`. The provider gets a per-call signal linked to the run's: provider
   * SDKs may add abort listeners they never remove (the openai SDK does), and the link is dropped when the
   * call ends, so a long run does not collect one listener per turn.
   */
  async stream(messages: ChatMessage[], tools: readonly LlmToolSpec[], ctx: InvocationContext, onEvent: LlmEventSink, responseFormat?: LlmResponseFormat): Promise<void> {
    const governance = this.governance.session;
    const match = { sessionId: ctx.sessionId };
    if (governance.budget) {
      const estimate = estimateTokens(messages, tools);
      let decision;
      try {
        decision = await governance.budget.beforeLlmCall(estimate, ctx.signal);
      } catch (error) {
        decision = { kind: 'deny' as const, resource: 'llm_tokens', reason: `budget guard failed: ${error instanceof Error ? error.message : String(error)}` };
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
    this.calls += 1;
    const model = this.model;
    const last = messages.at(-1);
    governance.hooks?.observe('generate_start', { session_id: ctx.sessionId, run_id: ctx.runId, model: model.id, prompt: last?.content ?? '', message_count: messages.length }, match);
    let totalTokens = 0;
    let responseText = '';
    const hooked = governance.hooks !== undefined;
    const request: LlmRequest = { model: model.modelName, messages, tools, signal: call.signal };
    if (model.maxTokens !== undefined) request.maxTokens = model.maxTokens;
    if (model.temperature !== undefined) request.temperature = model.temperature;
    if (responseFormat) request.responseFormat = responseFormat;
    try {
      await model.provider.stream(request, (event) => {
        if (event.type === 'usage') totalTokens += event.totalTokens;
        else if (hooked && event.type === 'text_delta') responseText += event.text;
        onEvent(event);
      });
    } finally {
      signal.removeEventListener('abort', onAbort);
      // Streaming terminal usage is recorded even when the stream broke after reporting it.
      governance.budget?.recordUsage(totalTokens);
      governance.hooks?.observe('generate_end', { session_id: ctx.sessionId, run_id: ctx.runId, model: model.id, response_text: responseText, total_tokens: totalTokens }, match);
    }
  }

  /**
   * One run-owned helper call without tools (planning, structured output and its repairs, goal checks,
   * compaction): the same budget check, usage record, hooks and cancellation as a turn, answered as the
   * whole text and the usage the provider reported.
   */
  async complete(messages: ChatMessage[], ctx: InvocationContext, responseFormat?: LlmResponseFormat): Promise<LlmCompletion> {
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
      responseFormat,
    );
    return { text, usage };
  }
}

/** What a helper call answered. */
export interface LlmCompletion {
  text: string;
  usage: Usage;
}

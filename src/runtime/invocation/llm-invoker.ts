import type { ChatMessage } from '../../protocol/chat-message.js';
import type { LlmProvider, LlmStreamEvent, LlmToolSpec } from '../llm/llm-provider.js';

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
}

/** The one LLM invoker of a session: every provider call goes through it with the run's signal. */
export class LlmInvoker {
  constructor(private readonly model: ResolvedModel) {}

  /**
   * Stream one completion for the transcript and tools. The provider gets a per-call signal linked to
   * the run's: provider SDKs may add abort listeners they never remove (the openai SDK does), and the
   * link is dropped when the call ends, so a long run does not collect one listener per turn.
   */
  async *stream(messages: ChatMessage[], tools: LlmToolSpec[], signal: AbortSignal): AsyncGenerator<LlmStreamEvent> {
    const call = new AbortController();
    const onAbort = (): void => call.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    try {
      yield* this.model.provider.stream({
        model: this.model.modelName,
        messages,
        tools,
        signal: call.signal,
        ...(this.model.maxTokens !== undefined ? { maxTokens: this.model.maxTokens } : {}),
        ...(this.model.temperature !== undefined ? { temperature: this.model.temperature } : {}),
      });
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }
}

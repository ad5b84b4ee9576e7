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

  /** Stream one completion for the transcript and tools. */
  stream(messages: ChatMessage[], tools: LlmToolSpec[], signal: AbortSignal): AsyncIterable<LlmStreamEvent> {
    return this.model.provider.stream({
      model: this.model.modelName,
      messages,
      tools,
      signal,
      ...(this.model.maxTokens !== undefined ? { maxTokens: this.model.maxTokens } : {}),
      ...(this.model.temperature !== undefined ? { temperature: this.model.temperature } : {}),
    });
  }
}

import type { ModelConfig } from './provider-config.js';

/** What a model block contributes to every provider request: `max_tokens` and `temperature`. */
export interface ModelRequestDefaults {
  maxTokens?: number;
  temperature?: number;
}

/**
 * The request settings of a model block: `max_tokens` from `max_tokens` (ours) or `limit.output` (the
 * seed's); `temperature` is the session's (`requested`), else the block's when it gives a number. A block
 * with `temperature = false` says the model takes none, so none is sent; `true` only says it takes one.
 */
export function modelRequestDefaults(model: ModelConfig | undefined, requested?: number): ModelRequestDefaults {
  const output = model?.limit?.output;
  const maxTokens = model?.maxTokens ?? (output !== undefined && output > 0 ? output : undefined);
  const temperature =
    model?.temperature === false
      ? undefined
      : (requested ?? (typeof model?.temperature === 'number' ? model.temperature : undefined));
  return {
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
  };
}

/** The seed's default context window when a model block names none (`maxContextTokens` 200k). */
export const DEFAULT_CONTEXT_TOKENS = 200_000;

/** A model block's context window: the seed's `limit.context`, else ours (`context_window`) or the seed's deprecated `contextTokens`. */
export function modelContextTokens(model: ModelConfig | undefined): number | undefined {
  const context = model?.limit?.context;
  return context !== undefined && context > 0 ? context : (model?.contextWindow ?? model?.contextTokens);
}

import type { Usage } from '../../protocol/run-record.js';
import type { CommandCatalog } from './command-catalog.js';

/** A model's prices per million tokens, as its config block's `cost {input, output}` writes them. */
export interface ModelPrices {
  readonly input: number;
  readonly output: number;
}

function perMillion(cost: Record<string, unknown> | undefined, key: string): number | undefined {
  const value = cost?.[key];
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** The prices of a model from the providers' config, undefined when its block has no numeric `cost {input, output}`. */
export function modelPrices(
  catalog: CommandCatalog,
  model: { readonly providerName: string; readonly modelName: string },
): ModelPrices | undefined {
  const cost = catalog.providers[model.providerName]?.models[model.modelName]?.cost;
  const input = perMillion(cost, 'input');
  const output = perMillion(cost, 'output');
  return input === undefined || output === undefined ? undefined : { input, output };
}

/** Estimated USD of a usage at these prices (0 without prices: the seed's `totalCost` is a number). */
export function estimatedCost(usage: Usage, prices: ModelPrices | undefined): number {
  if (!prices) return 0;
  return (usage.promptTokens * prices.input + usage.completionTokens * prices.output) / 1_000_000;
}

import type { ChatMessage } from '../../protocol/chat-message.js';
import type { CommandInfo } from '../../protocol/commands.js';
import type { Usage } from '../../protocol/run-record.js';
import type { CommandCatalog } from './command-catalog.js';
import { CommandFailure } from './command-failure.js';
import { estimatedCost, modelPrices } from './estimated-cost.js';

/** The built-in slash commands and what /help says of them. */
export const BUILTIN_COMMANDS: readonly { readonly name: string; readonly description: string }[] = [
  { name: 'help', description: 'List the commands of this session.' },
  {
    name: 'compact',
    description: 'Compact the conversation now: older messages become a summary, the recent ones stay.',
  },
  {
    name: 'model',
    description: "Show the session's model and the configured ones, or switch it: /model [provider/model].",
  },
  { name: 'cost', description: 'Tokens used by the conversation and the estimated cost.' },
  { name: 'clear', description: 'Clear the conversation; the session stays.' },
];

/** What the built-ins read of their session. */
export interface BuiltinCommandHost {
  /** The session's model: "provider/model", the provider and the model key. */
  readonly model: { readonly id: string; readonly providerName: string; readonly modelName: string };
  readonly catalog: CommandCatalog;
  /** Token usage of the conversation so far. */
  usage(): Usage;
  historyLen(): number;
  /** Every command of the session, as listed. */
  list(): CommandInfo[];
  /** Switch the session's model for later runs; absent: `/model` cannot switch. */
  switchModel?(modelId: string): { readonly id: string };
  /** Compact the conversation now (the summary call runs under the command run); absent: `/compact` cannot. */
  compact?(): Promise<BuiltinOutcome>;
}

/** What a built-in produced: its text, whether the transcript is to be emptied (/clear) or replaced (/compact), and provider usage. */
export interface BuiltinOutcome {
  readonly text: string;
  readonly clear?: boolean;
  /** The transcript that replaces the session's, without the command's own input and answer (/compact). */
  readonly replace?: ChatMessage[];
  /** Provider usage of the command (the summary call of /compact). */
  readonly usage?: Usage;
}

/** Run a built-in command; a refusal (an unconfigured model for /model, a blocked /compact) throws CommandFailure. */
export function runBuiltinCommand(
  name: string,
  args: string,
  host: BuiltinCommandHost,
): BuiltinOutcome | Promise<BuiltinOutcome> {
  switch (name) {
    case 'help':
      return {
        text: ['Commands:', ...host.list().map((c) => `/${c.name}${c.description ? ` - ${c.description}` : ''}`)].join(
          '\n',
        ),
      };
    case 'compact':
      if (!host.compact)
        throw new CommandFailure('COMMAND_FAILED', '/compact: this session cannot compact its conversation');
      return host.compact();
    case 'model':
      return modelCommand(args, host);
    case 'cost':
      return { text: costText(host) };
    case 'clear':
      return { text: `Cleared the conversation (${host.historyLen()} messages); the session stays.`, clear: true };
    default:
      throw new CommandFailure('UNKNOWN_COMMAND', `/${name} is not a built-in command`);
  }
}

function configuredModels(catalog: CommandCatalog): string[] {
  return Object.entries(catalog.providers).flatMap(([provider, settings]) =>
    Object.keys(settings.models).map((model) => `${provider}/${model}`),
  );
}

function modelCommand(args: string, host: BuiltinCommandHost): BuiltinOutcome {
  const current = host.model.id;
  const models = configuredModels(host.catalog);
  const listed = models.length > 0 ? `\nConfigured models: ${models.join(', ')}` : '';
  if (args === '') return { text: `Model: ${current}${listed}` };
  if (args === current) return { text: `Model: ${current} (already in use)` };
  const slash = args.indexOf('/');
  const provider = slash > 0 ? args.slice(0, slash) : '';
  const providers = Object.keys(host.catalog.providers);
  if (slash <= 0 || slash === args.length - 1 || /\s/.test(args))
    throw new CommandFailure('COMMAND_FAILED', `/model: "${args}" is not "provider/model"`);
  if (!Object.hasOwn(host.catalog.providers, provider)) {
    throw new CommandFailure(
      'COMMAND_FAILED',
      `/model: provider "${provider}" is not configured; configured providers: ${providers.length > 0 ? providers.join(', ') : '(none)'}`,
    );
  }
  // Any model of a configured provider, as at session creation (a model block only adds request defaults).
  if (!host.switchModel)
    throw new CommandFailure('COMMAND_FAILED', `/model: this session cannot switch models; it keeps ${current}`);
  try {
    const switched = host.switchModel(args);
    return { text: `Model: ${switched.id} (was ${current}); the next runs use it.` };
  } catch (error) {
    throw new CommandFailure('COMMAND_FAILED', `/model: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function costText(host: BuiltinCommandHost): string {
  const usage = host.usage();
  const tokens = `Tokens: ${usage.totalTokens} (prompt ${usage.promptTokens}, completion ${usage.completionTokens})`;
  const prices = modelPrices(host.catalog, host.model);
  if (!prices)
    return `${tokens}\nEstimated cost: unknown (the model block of ${host.model.id} has no cost {input, output})`;
  const dollars = estimatedCost(usage, prices);
  return `${tokens}\nEstimated cost: $${dollars.toFixed(6)} (${prices.input} input, ${prices.output} output per million tokens)`;
}

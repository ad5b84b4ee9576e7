import type { CodeConfig } from '../../config/code-config.js';
import type { CommandRegistration } from '../../protocol/commands.js';

/** What the server configuration gives every session's slash commands: config `commands` and the providers (for /model and /cost). */
export interface CommandCatalog {
  /** Commands every session has (config `commands`); their webhooks may call private addresses (the operator declared them). */
  readonly commands: readonly CommandRegistration[];
  readonly providers: CodeConfig['providers'];
}

/** The catalog of a server configuration. */
export function commandCatalog(config: Pick<CodeConfig, 'commands' | 'providers'>): CommandCatalog {
  return { commands: config.commands, providers: config.providers };
}

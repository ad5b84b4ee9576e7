import type { CommandInfo, CommandKind, CommandRegistration } from '../../protocol/commands.js';

/** A registered slash command of a session (from config `commands` or POST .../commands). */
export interface SlashCommand {
  readonly name: string;
  readonly description: string;
  readonly kind: CommandKind;
  readonly template?: string;
  readonly url?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly connectionId?: string;
  readonly timeoutMs?: number;
  readonly override: boolean;
  readonly source: 'config' | 'session';
  /** The webhook may call private, loopback or link-local addresses (config commands; a host_direct registrant). */
  readonly allowPrivateNetworks: boolean;
}

/** A slash command from its registration. */
export function slashCommand(
  registration: CommandRegistration,
  source: 'config' | 'session',
  allowPrivateNetworks: boolean,
): SlashCommand {
  return {
    name: registration.name,
    description: registration.description,
    kind: registration.kind,
    ...(registration.template !== undefined ? { template: registration.template } : {}),
    ...(registration.url !== undefined ? { url: registration.url } : {}),
    ...(registration.headers !== undefined ? { headers: registration.headers } : {}),
    ...(registration.connectionId !== undefined ? { connectionId: registration.connectionId } : {}),
    ...(registration.timeoutMs !== undefined ? { timeoutMs: registration.timeoutMs } : {}),
    override: registration.override === true,
    source,
    allowPrivateNetworks,
  };
}

/** A command in wire form (headers are never echoed). */
export function commandInfo(command: SlashCommand, overridesBuiltin: boolean): CommandInfo {
  return {
    name: command.name,
    description: command.description,
    kind: command.kind,
    source: command.source,
    timeoutMs: command.timeoutMs ?? null,
    overridesBuiltin,
  };
}

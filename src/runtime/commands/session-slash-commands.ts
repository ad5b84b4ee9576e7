import { CodeError } from '../../errors.js';
import {
  BUILTIN_COMMAND_NAMES,
  type CommandContext,
  type CommandInfo,
  type CommandRegistration,
} from '../../protocol/commands.js';
import type { RunRecord } from '../../protocol/run-record.js';
import type { WebSocketHostRegistry } from '../policy/host-bridge/websocket-host-registry.js';
import type { ResolvedSessionConfig } from '../session-kernel/resolved-session-config.js';
import {
  BUILTIN_COMMANDS,
  runBuiltinCommand,
  type BuiltinCommandHost,
  type BuiltinOutcome,
} from './builtin-commands.js';
import type { CommandCatalog } from './command-catalog.js';
import { estimatedCost, modelPrices } from './estimated-cost.js';
import { CommandFailure } from './command-failure.js';
import { parseCommandInput } from './parse-command-input.js';
import { produceCommandRun, type CommandExecution, type CommandRunHost } from './produce-command-run.js';
import { renderCommandTemplate } from './render-command-template.js';
import { runRemoteCommand } from './run-remote-command.js';
import { commandInfo, slashCommand, type SlashCommand } from './slash-command.js';

/** What a session's slash commands need from the session. */
export interface SessionSlashCommandsDeps {
  readonly config: ResolvedSessionConfig;
  readonly catalog: CommandCatalog;
  readonly hostRegistry: WebSocketHostRegistry;
  /** The parts a command run uses (built per run). */
  runHost(): CommandRunHost;
  /** Names of the tools the model sees. */
  toolNames(): string[];
  /** Names of the MCP servers the session reaches. */
  mcpServers(): string[];
  /** Switch the session's model for later runs (throws naming the problem); absent: `/model` only shows it. */
  switchModel?(modelId: string): { readonly id: string };
  /** Compact the transcript now, under the command run `runId` (its summary call is cancelled with `signal`). */
  compact?(runId: string, signal: AbortSignal): Promise<BuiltinOutcome>;
}

const isBuiltin = (name: string) => (BUILTIN_COMMAND_NAMES as readonly string[]).includes(name);

/**
 * A session's slash commands: the built-ins, config `commands` and those registered over REST (later ones
 * replace earlier ones of the same name), and the run of an input `/name args` in place of the model.
 */
export class SessionSlashCommands {
  private readonly own = new Map<string, SlashCommand>();
  private configured: Map<string, SlashCommand> | undefined;

  constructor(private readonly deps: SessionSlashCommandsDeps) {}

  private get fromConfig(): Map<string, SlashCommand> {
    this.configured ??= new Map(this.deps.catalog.commands.map((c) => [c.name, slashCommand(c, 'config', true)]));
    return this.configured;
  }

  /** The registered command of a name (session, then config); undefined for a built-in or an unknown name. */
  private registered(name: string): SlashCommand | undefined {
    return this.own.get(name) ?? this.fromConfig.get(name);
  }

  /** Every command: built-ins (unless replaced), then config commands, then the session's own. */
  list(): CommandInfo[] {
    const builtins: CommandInfo[] = BUILTIN_COMMANDS.filter((c) => !this.registered(c.name)).map((c) => ({
      ...c,
      kind: 'builtin',
      source: 'builtin',
      timeoutMs: null,
      overridesBuiltin: false,
    }));
    const config = [...this.fromConfig.values()].filter((c) => !this.own.has(c.name));
    return [...builtins, ...[...config, ...this.own.values()].map((c) => commandInfo(c, isBuiltin(c.name)))];
  }

  /**
   * Register (or replace) a session command. The body schema already refused bad names, sizes, URLs and
   * shadowing without override; a websocket command's connectionId must be a host connection of the session's tenant.
   */
  register(registration: CommandRegistration, allowPrivateNetworks: boolean): CommandInfo {
    if (registration.kind === 'websocket' && registration.connectionId !== undefined) {
      const binding = this.deps.hostRegistry.bindingOf(registration.connectionId);
      if (!binding || binding.tenantId !== this.deps.config.ownerTenantId) {
        throw new CodeError(
          'VALIDATION_ERROR',
          'body.connectionId: no host connection of this tenant has this id; send {"type":"host_register"} on an events WebSocket first',
          { field: 'connectionId' },
        );
      }
    }
    const command = slashCommand(registration, 'session', allowPrivateNetworks);
    this.own.set(command.name, command);
    return commandInfo(command, isBuiltin(command.name));
  }

  /** Remove a session command (COMMAND_NOT_FOUND naming it when the session registered none of that name). */
  remove(name: string): void {
    if (this.own.delete(name)) return;
    const other = isBuiltin(name)
      ? ' (built-in commands cannot be removed)'
      : this.fromConfig.has(name)
        ? ' (config commands cannot be removed)'
        : '';
    throw new CodeError(
      'COMMAND_NOT_FOUND',
      `command "${name}" is not a registered command of session ${this.deps.config.sessionId}${other}`,
      { name },
    );
  }

  /**
   * The run of an input that names a command (`/name args`, name a command name), or undefined when the
   * input is no command (a path such as `/usr/bin ...` goes to the model). An unknown name gives a failed
   * run listing the known commands; nothing reaches the model either way.
   */
  produce(record: RunRecord, input: string, signal: AbortSignal): Promise<RunRecord> | undefined {
    const parsed = parseCommandInput(input);
    if (!parsed) return undefined;
    return produceCommandRun(
      this.deps.runHost(),
      record,
      input,
      () => this.execute(parsed.name, parsed.args, record.runId, signal),
      signal,
    );
  }

  private async execute(name: string, args: string, runId: string, signal: AbortSignal): Promise<CommandExecution> {
    const command = this.registered(name);
    if (command) return { text: await this.runRegistered(command, args, signal) };
    if (isBuiltin(name)) return runBuiltinCommand(name, args, this.builtinHost(runId, signal));
    const known = this.list()
      .map((c) => `/${c.name}`)
      .join(', ');
    throw new CommandFailure('UNKNOWN_COMMAND', `unknown command /${name}; known commands: ${known}`);
  }

  private async runRegistered(command: SlashCommand, args: string, signal: AbortSignal): Promise<string> {
    const ctx = this.context(command.name, args);
    if (command.kind === 'template') return renderCommandTemplate(command.template ?? '', ctx);
    const { config, hostRegistry } = this.deps;
    return runRemoteCommand(
      command,
      ctx,
      { registry: hostRegistry, tenantId: config.ownerTenantId, sessionId: config.sessionId },
      signal,
    );
  }

  private context(name: string, args: string): CommandContext {
    const { config } = this.deps;
    const { transcript } = this.deps.runHost();
    return {
      command: name,
      args,
      sessionId: config.sessionId,
      workspace: config.workspace,
      model: config.model.id,
      historyLen: transcript.messages.length,
      totalTokens: transcript.usage.totalTokens,
      totalCost: estimatedCost(transcript.usage, modelPrices(this.deps.catalog, config.model)),
      toolNames: this.deps.toolNames(),
      mcpServers: this.deps.mcpServers(),
    };
  }

  private builtinHost(runId: string, signal: AbortSignal): BuiltinCommandHost {
    const { transcript } = this.deps.runHost();
    const { switchModel, compact } = this.deps;
    return {
      model: this.deps.config.model,
      catalog: this.deps.catalog,
      usage: () => transcript.usage,
      historyLen: () => transcript.messages.length,
      list: () => this.list(),
      ...(switchModel ? { switchModel } : {}),
      ...(compact ? { compact: () => compact(runId, signal) } : {}),
    };
  }
}
